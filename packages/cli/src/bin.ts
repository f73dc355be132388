#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { main } from "./index.js"

NodeRuntime.runMain(main(process.argv), { disableErrorReporting: true })
