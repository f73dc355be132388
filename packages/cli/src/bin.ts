#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { defaultTeardown } from "@effect/platform/Runtime"
import { main } from "./internal/main.js"
import { signalExitCode } from "./internal/terminal.js"

// Ctrl-C interrupts the command (runMain's own handler); the exit code then says so (130), so `login && next` stops.
let signalled: number | undefined
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    signalled ??= signalExitCode(signal)
  })
}

NodeRuntime.runMain(main(process.argv), {
  disableErrorReporting: true,
  // main logs to stderr with its own logger
  disablePrettyLogger: true,
  teardown: (exit, onExit) => defaultTeardown(exit, (code) => onExit(signalled ?? code))
})
