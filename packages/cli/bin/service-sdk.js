#!/usr/bin/env node
// Committed shim so that npm can link the bin before the build has run. It runs the bundle
// (`scripts/bundle.mjs`, built by `npm run build`): one minified module, command handlers loaded on use.
import "../bundle/bin.js"
