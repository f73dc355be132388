/**
 * Opening the system browser on a URL, for `authorizeLocal`. A `Context.Reference`, so tests (and programs with
 * their own idea of a browser) can replace it without changing the helper's requirements.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ChildProcess, spawn } from "node:child_process"
import { browserCommand } from "@service-sdk/shared/browserCommand"

/** The browser could not be started. `reason` never contains the URL. */
export class BrowserOpenError extends Data.TaggedError("BrowserOpenError")<{ readonly reason: string }> {}

/** How long to watch the opener for a failing exit status; a still-running opener counts as success. */
const EXIT_GRACE = "2 seconds"

const start = (command: string, args: ReadonlyArray<string>) =>
  Effect.async<ChildProcess, BrowserOpenError>((resume) => {
    let child: ChildProcess
    try {
      child = spawn(command, args, { detached: true, stdio: "ignore", windowsHide: true })
    } catch (error) {
      resume(Effect.fail(new BrowserOpenError({ reason: `${command}: ${(error as Error).message}` })))
      return
    }
    child.once("error", (error: NodeJS.ErrnoException) => {
      // `error.message` is "spawn xdg-open ENOENT": the command, never its arguments.
      resume(Effect.fail(new BrowserOpenError({ reason: error.code ?? error.message })))
    })
    child.once("spawn", () => {
      child.unref()
      resume(Effect.succeed(child))
    })
  })

const exitCode = (child: ChildProcess) =>
  Effect.async<number | null>((resume) => {
    if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })

/** Starts the platform's opener, detached; fails when it cannot start or exits with a failing status at once. */
export const openSystemBrowser = (url: string): Effect.Effect<void, BrowserOpenError> => {
  const { command, args } = browserCommand(process.platform, url)
  return start(command, args).pipe(
    Effect.flatMap((child) => Effect.timeoutOption(exitCode(child), EXIT_GRACE)),
    Effect.flatMap(
      Option.match({
        onNone: () => Effect.void,
        onSome: (code) =>
          code === 0 || code === null
            ? Effect.void
            : Effect.fail(new BrowserOpenError({ reason: `${command} exited with status ${code}` }))
      })
    )
  )
}

/**
 * The browser opener `authorizeLocal` uses (default: {@link openSystemBrowser}).
 */
export class BrowserOpener extends Context.Reference<BrowserOpener>()("service-sdk/internal/BrowserOpener", {
  defaultValue: (): ((url: string) => Effect.Effect<void, BrowserOpenError>) => openSystemBrowser
}) {}
