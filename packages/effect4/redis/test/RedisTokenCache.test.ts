/** RedisTokenCache of the Effect 4 line against a real redis-server: the entry, compare-and-set, the lock. */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Redis } from "ioredis"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/redis"
import { TokenInfo } from "service-sdk"
import { type RunningRedis, redisAvailable, startRedis } from "./support/redisServer.js"

let redis: RunningRedis
beforeAll(async () => {
  if (redisAvailable) redis = await startRedis()
}, 30_000)
afterAll(async () => {
  await redis?.stop()
})

const token = (access: string, refresh?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(access),
    expiresAt: Date.now() / 1000 + 3600,
    ...(refresh !== undefined ? { refreshToken: Redacted.make(refresh) } : {})
  })

describe.skipIf(!redisAvailable)("RedisTokenCache (Effect 4 line)", () => {
  it.live("stores the one JSON format under the key; compareAndSet writes only over the expected entry", () =>
    Effect.gen(function* () {
      const key = `test:cas:${Math.random()}`
      const cache = yield* RedisTokenCache.make({ url: redis.url, key })
      assert.isTrue(Option.isNone(yield* cache.get))
      assert.isTrue(yield* cache.compareAndSet!(Option.none(), token("a1", "r1")))
      assert.isFalse(yield* cache.compareAndSet!(Option.none(), token("a2", "r2")))
      const current = yield* cache.get
      assert.isTrue(yield* cache.compareAndSet!(current, token("a3", "r3")))
      const raw = yield* Effect.promise(async () => {
        const client = new Redis(redis.url)
        const text = await client.get(key)
        const ttl = await client.pttl(key)
        await client.quit()
        return { text, ttl }
      })
      assert.match(raw.text!, /^\{"access_token":"a3","expires_at":[\d.]+,"refresh_token":"r3"\}$/)
      // an entry with a refresh token never expires
      assert.strictEqual(raw.ttl, -1)
      yield* cache.clear!
      assert.isTrue(Option.isNone(yield* cache.get))
    }).pipe(Effect.scoped)
  )

  it.live("withLock excludes a second holder until the first is done", () =>
    Effect.gen(function* () {
      const key = `test:lock:${Math.random()}`
      const a = yield* RedisTokenCache.make({ url: redis.url, key })
      const b = yield* RedisTokenCache.make({ url: redis.url, key, pollInterval: "10 millis" })
      const order: Array<string> = []
      const first = yield* Effect.forkChild(
        a.withLock!(
          Effect.andThen(
            Effect.sync(() => order.push("a in")),
            Effect.delay(
              Effect.sync(() => order.push("a out")),
              "300 millis"
            )
          )
        )
      )
      yield* Effect.sleep("50 millis")
      yield* b.withLock!(Effect.sync(() => order.push("b in")))
      yield* Fiber.join(first)
      assert.deepStrictEqual(order, ["a in", "a out", "b in"])
    }).pipe(Effect.scoped)
  )

  it.live("RedisTokenStore keys users apart with the Effect 3 line's key names", () =>
    Effect.gen(function* () {
      const store = yield* RedisTokenStore.make({ url: redis.url, prefix: "test:users:" })
      yield* store("ada/../x").set(token("ada-token"))
      assert.isTrue(Option.isNone(yield* store("bob").get))
      assert.strictEqual(RedisTokenStore.userKey("test:users:", "ada/../x"), "test:users:ada%002f..%002fx")
      const raw = yield* Effect.promise(async () => {
        const client = new Redis(redis.url)
        const text = await client.get("test:users:ada%002f..%002fx")
        await client.quit()
        return text
      })
      assert.include(raw!, '"access_token":"ada-token"')
    }).pipe(Effect.scoped)
  )

  it.live("a key holding another application's value is a TokenCacheError and is left alone", () =>
    Effect.gen(function* () {
      const key = `test:neighbour:${Math.random()}`
      yield* Effect.promise(async () => {
        const client = new Redis(redis.url)
        await client.set(key, "their-value")
        await client.quit()
      })
      const cache = yield* RedisTokenCache.make({ url: redis.url, key })
      const error = yield* Effect.flip(cache.get)
      assert.strictEqual(error._tag, "TokenCacheError")
      assert.match(error.message, /holds another application's value \(a string\)/)
      assert.strictEqual(
        (yield* Effect.flip(cache.compareAndSet!(Option.none(), token("mine"))))._tag,
        "TokenCacheError"
      )
      assert.strictEqual((yield* Effect.flip(cache.clear!))._tag, "TokenCacheError")
      const raw = yield* Effect.promise(async () => {
        const client = new Redis(redis.url)
        const text = await client.get(key)
        await client.quit()
        return text
      })
      assert.strictEqual(raw, "their-value")
    }).pipe(Effect.scoped)
  )

  it.live("a lock key holding another application's value is a TokenCacheError, never re-timed", () =>
    Effect.gen(function* () {
      const key = `test:neighbour-lock:${Math.random()}`
      yield* Effect.promise(async () => {
        const client = new Redis(redis.url)
        await client.hset(RedisTokenCache.lockKey(key), "field", "theirs")
        await client.quit()
      })
      const cache = yield* RedisTokenCache.make({ url: redis.url, key })
      const error = yield* Effect.flip(cache.withLock!(Effect.void))
      assert.match(error.message, /holds another application's value \(a hash\)/)
      const ttl = yield* Effect.promise(async () => {
        const client = new Redis(redis.url)
        const value = await client.pttl(RedisTokenCache.lockKey(key))
        await client.quit()
        return value
      })
      assert.strictEqual(ttl, -1)
    }).pipe(Effect.scoped)
  )

  it.live("a bad option is a ConfigurationError naming it", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(RedisTokenCache.make({ url: redis.url, key: "k", lockTtl: -1 }))
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.match(error.message, /lockTtl/)
    }).pipe(Effect.scoped)
  )
})
