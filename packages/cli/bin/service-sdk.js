#!/usr/bin/env node
// Committed shim so that npm can link the bin before the TypeScript build has run.
import "../dist/bin.js"
