/**
 * A scoped Effect (a connection) for plain code, with a facade object's logging: its value and a `close()` that
 * releases what it acquired. `@service-sdk/promise` connects its Redis caches with it, so that what they log (the
 * eviction-policy warning) goes to the app's `logger` on stderr, never to stdout.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { callSite, getOrThrow } from "./bridge.js"
import { type FacadeLogger, type LogLevelName, resolveLogging, withLogging } from "./logging.js"

/**
 * Runs `effect` in a scope of its own with the logging of `options` (default: warnings on stderr); rejects with the
 * SDK's own error (the scope closed first). Throws ConfigurationError for a bad `logLevel` or `logger`.
 */
export const startScoped = async <A, E>(
  effect: Effect.Effect<A, E, Scope.Scope>,
  options: { readonly logLevel?: LogLevelName | undefined; readonly logger?: FacadeLogger | undefined } = {}
): Promise<{ readonly value: A; readonly close: () => Promise<void> }> => {
  const site = callSite(startScoped)
  const logged = withLogging(resolveLogging(options))
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(logged(Scope.provide(scope)(effect)))
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= Effect.runPromise(logged(Scope.close(scope, Exit.void)))
    return closing
  }
  if (Exit.isSuccess(exit)) return { value: exit.value, close }
  await close()
  return { value: getOrThrow(exit, site), close }
}
