/**
 * The options of `authorizeLocal` for plain code, and the flow run with them: a plain or async
 * `onAuthorizationUrl` takes part in the flow (its rejection or throw fails the flow with that error, and the flow
 * resolves once the callback's own work has ended as well as the sign-in).
 */
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { AuthorizeLocalOptions } from "../../authorizeLocal.js"

/**
 * The options of `authorizeLocal`; `onAuthorizationUrl` may return a Promise (the flow fails with its rejection).
 *
 * @since 2.0.0
 */
export interface AsyncAuthorizeLocalOptions extends Omit<AuthorizeLocalOptions, "onAuthorizationUrl"> {
  readonly onAuthorizationUrl?: ((url: string) => void | PromiseLike<void> | Effect.Effect<void>) | undefined
}

const isPromiseLike = (u: unknown): u is PromiseLike<void> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

/** `run` (the Effect `authorizeLocal`) with the plain options. */
export const withPlainCallback = <A, E, R>(
  options: AsyncAuthorizeLocalOptions | undefined,
  run: (options: AuthorizeLocalOptions) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const { onAuthorizationUrl, ...rest } = options ?? {}
  if (onAuthorizationUrl === undefined) return run(rest)
  return Effect.gen(function* () {
    const failed = yield* Deferred.make<never, E>()
    // the callback's own work, when it is a Promise: it goes on after the flow's scope closes (its fiber is
    // interrupted then), and the flow resolves once it has settled too
    let pending: Promise<unknown> = Promise.resolve()
    const fail = (cause: Cause.Cause<unknown>) => Deferred.failCause(failed, cause as Cause.Cause<E>)
    const callback = (url: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const result = onAuthorizationUrl(url)
        if (Effect.isEffect(result)) return Effect.catchCause(result, fail)
        if (isPromiseLike(result)) {
          pending = Promise.resolve(result).then(undefined, (error: unknown) => {
            // the callback's own error, as the flow's (plain code sees exactly what it rejected with)
            Effect.runSync(Deferred.fail(failed, error as E))
          })
        }
        return Effect.void
      }).pipe(Effect.catchCause(fail), Effect.asVoid)
    return yield* Effect.raceFirst(
      Effect.tap(run({ ...rest, onAuthorizationUrl: callback }), () => Effect.promise(() => pending)),
      Deferred.await(failed)
    )
  })
}
