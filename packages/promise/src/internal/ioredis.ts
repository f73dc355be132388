/**
 * `ioredis` for the bundle: the app's own copy, loaded when a Redis cache opens a connection from a `url` (never at
 * import, so apps without Redis need no `ioredis`). The build puts this module where `@service-sdk/redis` imports
 * `ioredis`; `client` options pass the app's client itself.
 */
import type * as IORedis from "ioredis"

/** `new Redis(url, options)` on the app's `ioredis` (5.x). */
export const Redis = function Redis(...args: ReadonlyArray<unknown>) {
  const ioredis = require("ioredis") as typeof IORedis
  return new (ioredis.Redis as unknown as new (...args: ReadonlyArray<unknown>) => IORedis.Redis)(...args)
} as unknown as typeof IORedis.Redis

export type { Cluster } from "ioredis"
