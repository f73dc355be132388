/**
 * `ioredis`, the peer dependency: loaded when a cache opens a connection of its own from a `url` (a `client` passed
 * in needs none, and importing `@service-sdk/redis` never needs it), so that a missing or broken copy is a
 * ConfigurationError that says what to install, not a bare "Cannot find module".
 */
import * as Effect from "effect/Effect"
import type * as IORedis from "ioredis"
import { ConfigurationError } from "@service-sdk/effect"

/** The failure to load (or to use) `ioredis` as a ConfigurationError naming the cause and the fix. */
export const missing = (cause: unknown): ConfigurationError => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""
  const text = cause instanceof Error ? cause.message : String(cause)
  const notInstalled =
    code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" || /Cannot find (module|package)/.test(text)
  return new ConfigurationError({
    message: notInstalled
      ? "@service-sdk/redis needs its peer dependency ioredis (5.x), which is not installed: npm install ioredis@5"
      : `@service-sdk/redis cannot load its peer dependency ioredis (5.x): ${text.split("\n")[0]}; reinstall it: npm install ioredis@5`
  })
}

/** The app's `ioredis`. */
export const ioredis: Effect.Effect<typeof IORedis, ConfigurationError> = Effect.tryPromise({
  try: () => import("ioredis"),
  catch: missing
})
