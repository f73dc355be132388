/**
 * Opening the system browser on a URL, for `authorizeLocal`. A browser that cannot be started is a warning (the URL
 * was announced already), never a failure of the sign-in.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"

/** Starts the platform's opener, detached. */
export const openBrowser = (url: string) =>
  Effect.callback<void>((resume) => {
    const [command, args] =
      process.platform === "darwin"
        ? ["open", [url]]
        : process.platform === "win32"
          ? ["cmd", ["/c", "start", "", url]]
          : ["xdg-open", [url]]
    const child = spawn(command, args as Array<string>, { stdio: "ignore", detached: true })
    child.once("error", () =>
      resume(Effect.logWarning("authorizeLocal: could not open a browser; open the URL printed"))
    )
    child.once("spawn", () => {
      child.unref()
      resume(Effect.void)
    })
  })
