/**
 * Opening the system browser on a URL, for `authorizeLocal`. A browser that cannot be started is a warning (the URL
 * was announced already), never a failure of the sign-in.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { browserCommand } from "@service-sdk/shared/browserCommand"

/** Starts the platform's opener, detached. */
export const openBrowser = (url: string) =>
  Effect.callback<void>((resume) => {
    const { args, command } = browserCommand(process.platform, url)
    const child = spawn(command, [...args], { stdio: "ignore", detached: true, windowsHide: true })
    child.once("error", () =>
      resume(Effect.logWarning("authorizeLocal: could not open a browser; open the URL printed"))
    )
    child.once("spawn", () => {
      child.unref()
      resume(Effect.void)
    })
  })
