/**
 * `@service-sdk/redis` (Effect 4 line) in the browser bundle (scripts/build.mjs): `ioredis` needs TCP sockets
 * (`node:net`, `node:tls`), which a page has not and a Worker cannot keep beyond one request, so
 * `RedisTokenCache.connect` and `RedisTokenStore.connect` reject with the ConfigurationError that says so, and
 * neither `ioredis` nor the Redis code is bundled.
 */
import type * as Node from "../../../../effect4/redis/src/index.js"
import { ConfigurationError } from "../../../../effect4/service-sdk/src/ServiceError.js"
import { noRedis } from "./reasons.js"

export const RedisTokenCache: Pick<typeof Node.RedisTokenCache, "make"> = {
  make: () => new ConfigurationError({ message: noRedis("RedisTokenCache") })
}

export const RedisTokenStore: Pick<typeof Node.RedisTokenStore, "make"> = {
  make: () => new ConfigurationError({ message: noRedis("RedisTokenStore") })
}
