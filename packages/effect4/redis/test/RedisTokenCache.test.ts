/**
 * `RedisTokenCache` on one real redis-server: the stored JSON (the Effect 3 line's format), entry expiry, the lock
 * (exclusion, release, heartbeat, a foreign or lost lock left alone), Redis down or away, bad options, `connect`.
 */
import { randomUUID } from "node:crypto"
import { expect, it } from "@effect/vitest"
import { RedisTokenCache } from "@service-sdk/redis"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import { TokenCacheError, TokenInfo } from "@service-sdk/effect"
import { startProxy } from "../../../redis/test/support/proxy.js"
import { describeRedis, freePort } from "../../../redis/test/support/redisServer.js"

const uniqueKey = () => `test4:token:${randomUUID()}`

const token = (
  fields: { expiresAt: number; refreshToken?: string; scope?: string },
  accessToken = "at-secret-123456"
) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    expiresAt: fields.expiresAt,
    ...(fields.refreshToken === undefined ? {} : { refreshToken: Redacted.make(fields.refreshToken) }),
    ...(fields.scope === undefined ? {} : { scope: fields.scope })
  })

const nowSeconds = () => Date.now() / 1000
const fromPromise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Runs `check` every 10 ms until it holds, for at most `millis`. */
const eventually = <E>(check: Effect.Effect<boolean, E>, millis = 2000) =>
  Effect.gen(function* () {
    for (let waited = 0; waited < millis; waited += 10) {
      if (yield* check) return
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.die(new Error(`condition not met within ${millis} ms`))
  })

describeRedis("RedisTokenCache (Effect 4)", (server) => {
  const admin = () => server().admin
  const cache = (options: Partial<RedisTokenCache.Options> & { readonly key: string }) =>
    RedisTokenCache.make({ url: server().url, ...options })

  it.live("an empty key reads as none; a token set is read back by another connection, as the shared JSON", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const first = yield* cache({ key })
      const second = yield* cache({ key })
      expect(Option.isNone(yield* first.get)).toBe(true)
      const stored = new TokenInfo({
        ...token({ expiresAt: nowSeconds() + 3600, refreshToken: "rt-secret-abcdef", scope: "a b" }),
        clientId: "c1",
        authUrl: "http://127.0.0.1:9",
        issuedAt: 1000.5,
        refreshRejected: true
      })
      yield* first.set(stored)
      const value = Option.getOrThrow(yield* second.get)
      expect(Redacted.value(value.accessToken)).toBe("at-secret-123456")
      expect(value.expiresAt).toBe(stored.expiresAt)
      expect(Redacted.value(value.refreshToken!)).toBe("rt-secret-abcdef")
      expect([value.scope, value.clientId, value.authUrl, value.issuedAt, value.refreshRejected]).toEqual([
        "a b",
        "c1",
        "http://127.0.0.1:9",
        1000.5,
        true
      ])
      // the text, key order included, is the one both lines write
      expect(yield* fromPromise(() => admin().get(key))).toBe(
        JSON.stringify({
          access_token: "at-secret-123456",
          expires_at: stored.expiresAt,
          refresh_token: "rt-secret-abcdef",
          scope: "a b",
          client_id: "c1",
          auth_url: "http://127.0.0.1:9",
          issued_at: 1000.5,
          refresh_rejected: true
        })
      )
    })
  )

  it.live("an entry without refresh token expires a little after the token; one with a refresh token never", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* cache({ key })
      yield* tokens.set(token({ expiresAt: nowSeconds() + 100 }))
      const ttl = yield* fromPromise(() => admin().pttl(key))
      expect(ttl).toBeGreaterThan(100_000)
      expect(ttl).toBeLessThanOrEqual(160_000 + 1000)
      yield* tokens.set(token({ expiresAt: nowSeconds() - 7200, refreshToken: "rt-secret-abcdef" }))
      expect(yield* fromPromise(() => admin().pttl(key))).toBe(-1)
      expect(Option.isSome(yield* tokens.get)).toBe(true)
      yield* tokens.set(token({ expiresAt: nowSeconds() - 7200 }))
      const short = yield* fromPromise(() => admin().pttl(key))
      expect(short).toBeGreaterThan(0)
      expect(short).toBeLessThanOrEqual(1000)
    })
  )

  it.live("invalid stored JSON reads as none; an ill-typed optional field reads as absent", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* cache({ key })
      // ours (an object with access_token) but invalid: none; anything else is a neighbour's (neighbours.test.ts)
      for (const text of [
        '{"access_token": 1, "expires_at": 5}',
        '{"access_token": "x"}',
        '{"access_token": "", "expires_at": 5}'
      ]) {
        yield* fromPromise(() => admin().set(key, text))
        expect(Option.isNone(yield* tokens.get)).toBe(true)
      }
      yield* fromPromise(() =>
        admin().set(key, '{"access_token": "x", "expires_at": 5, "refresh_token": "", "scope": 3}')
      )
      const read = Option.getOrThrow(yield* tokens.get)
      expect([read.expiresAt, read.refreshToken, read.scope]).toEqual([5, undefined, undefined])
    })
  )

  it.live("withLock: concurrent holders on separate connections never overlap", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const caches = yield* Effect.forEach([1, 2, 3, 4], () => cache({ key, pollInterval: "5 millis" }))
      const inside = yield* Ref.make(0)
      const most = yield* Ref.make(0)
      const done = yield* Ref.make(0)
      const body = Effect.gen(function* () {
        const now = yield* Ref.updateAndGet(inside, (n) => n + 1)
        yield* Ref.update(most, (m) => Math.max(m, now))
        yield* Effect.sleep("20 millis")
        yield* Ref.update(inside, (n) => n - 1)
        yield* Ref.update(done, (n) => n + 1)
      })
      yield* Effect.forEach(caches, (c) => Effect.forEach([1, 2, 3], () => c.withLock!(body), { concurrency: 3 }), {
        concurrency: "unbounded"
      })
      expect(yield* Ref.get(done)).toBe(12)
      expect(yield* Ref.get(most)).toBe(1)
      expect(yield* fromPromise(() => admin().exists(RedisTokenCache.lockKey(key)))).toBe(0)
    })
  )

  it.live(
    "withLock: released when the body fails, and when the holder is interrupted; an interrupted waiter takes nothing",
    () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        const holder = yield* cache({ key, lockWait: "1 second" })
        expect(yield* Effect.flip(holder.withLock!(Effect.fail("boom" as const)))).toBe("boom")
        expect(yield* fromPromise(() => admin().exists(lockKey))).toBe(0)

        const other = yield* cache({ key, pollInterval: "5 millis" })
        const entered = yield* Deferred.make<void>()
        const holding = yield* Effect.forkChild(
          holder.withLock!(Effect.andThen(Deferred.succeed(entered, undefined), Effect.never))
        )
        yield* Deferred.await(entered)
        expect(yield* fromPromise(() => admin().exists(lockKey))).toBe(1)
        const ran = yield* Ref.make(false)
        const waiter = yield* Effect.forkChild(other.withLock!(Ref.set(ran, true)))
        yield* Effect.sleep("50 millis")
        yield* Fiber.interrupt(waiter)
        yield* Fiber.interrupt(holding)
        expect(yield* fromPromise(() => admin().exists(lockKey))).toBe(0)
        yield* Effect.sleep("50 millis")
        expect(yield* Ref.get(ran)).toBe(false)
        expect(yield* fromPromise(() => admin().exists(lockKey))).toBe(0)
        expect(yield* other.withLock!(Effect.succeed("next"))).toBe("next")
      })
  )

  it.live("withLock: waiting longer than lockWait is a TokenCacheError; another owner's lock is never deleted", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const lockKey = RedisTokenCache.lockKey(key)
      const someoneElse = randomUUID()
      yield* fromPromise(() => admin().set(lockKey, someoneElse, "PX", 10_000))
      const tokens = yield* cache({ key, lockWait: "200 millis", pollInterval: "20 millis" })
      const ran = yield* Ref.make(false)
      const error = yield* Effect.flip(tokens.withLock!(Ref.set(ran, true)))
      expect(error).toBeInstanceOf(TokenCacheError)
      expect(error.message).toContain(lockKey)
      expect(error.message).toContain(`127.0.0.1:${server().port}`)
      expect(yield* Ref.get(ran)).toBe(false)
      expect(yield* fromPromise(() => admin().get(lockKey))).toBe(someoneElse)

      // a holder whose lock was lost (expired and taken) leaves the new owner's lock alone
      const other = uniqueKey()
      const otherLock = RedisTokenCache.lockKey(other)
      const mine = yield* cache({ key: other })
      const newOwner = randomUUID()
      yield* mine.withLock!(fromPromise(() => admin().set(otherLock, newOwner, "PX", 10_000)))
      yield* Effect.sleep("50 millis")
      expect(yield* fromPromise(() => admin().get(otherLock))).toBe(newOwner)
      expect(yield* fromPromise(() => admin().pttl(otherLock))).toBeGreaterThan(5000)
    })
  )

  it.live("withLock: a live holder keeps its lock beyond lockTtl; a crashed one's lock expires after lockTtl", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const lockKey = RedisTokenCache.lockKey(key)
      const holder = yield* cache({ key, lockTtl: "300 millis" })
      const other = yield* cache({ key, lockWait: "100 millis", pollInterval: "10 millis" })
      const { blocked, stillHeld } = yield* holder.withLock!(
        Effect.gen(function* () {
          yield* Effect.sleep("700 millis")
          const stillHeld = yield* fromPromise(() => admin().exists(lockKey))
          const blocked = yield* Effect.result(other.withLock!(Effect.void))
          return { stillHeld, blocked }
        })
      )
      expect(stillHeld).toBe(1)
      expect(Result.isFailure(blocked)).toBe(true)
      yield* fromPromise(() => admin().set(lockKey, randomUUID(), "PX", 300))
      const patient = yield* cache({ key, lockWait: "2 seconds", pollInterval: "20 millis" })
      expect(yield* patient.withLock!(Effect.succeed("acquired"))).toBe("acquired")
    })
  )

  it.live("the default lockTtl is 10 s, extended at least every third of it", () =>
    Effect.gen(function* () {
      expect(RedisTokenCache.defaults.lockTtl).toEqual(Duration.seconds(10))
      const key = uniqueKey()
      const lockKey = RedisTokenCache.lockKey(key)
      const tokens = yield* cache({ key })
      const ttls = yield* tokens.withLock!(
        Effect.gen(function* () {
          const seen: Array<number> = []
          for (let i = 0; i < 4; i++) {
            seen.push(yield* fromPromise(() => admin().pttl(lockKey)))
            yield* Effect.sleep("700 millis")
          }
          return seen
        })
      )
      expect(ttls[0]).toBeGreaterThan(9000)
      expect(ttls[0]).toBeLessThanOrEqual(10_000)
      expect(Math.min(...ttls)).toBeGreaterThan(10_000 * (2 / 3))
    })
  )

  it.live("Redis down: make fails with a TokenCacheError naming the address, without the password", () =>
    Effect.gen(function* () {
      const port = yield* fromPromise(freePort)
      const error = yield* Effect.flip(
        Effect.scoped(RedisTokenCache.make({ url: `redis://user:pa55-secret@127.0.0.1:${port}/2`, key: uniqueKey() }))
      )
      expect(error).toBeInstanceOf(TokenCacheError)
      expect(error.message).toContain(`redis://127.0.0.1:${port}/2`)
      expect(error.message).toMatch(/ECONNREFUSED/)
      for (const text of [error.message, String(error), JSON.stringify(error), String(error.cause)]) {
        expect(text).not.toContain("pa55-secret")
        expect(text).not.toContain("user:")
      }
    })
  )

  it.live(
    "a borrowed client: never ready is a TokenCacheError within commandTimeout; gone later fails every call, never showing the token",
    () =>
      Effect.gen(function* () {
        const port = yield* fromPromise(freePort)
        const down = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true })
            redis.on("error", () => {})
            return redis
          }),
          (redis) => Effect.sync(() => redis.disconnect())
        )
        const makeError = yield* Effect.flip(
          Effect.scoped(RedisTokenCache.make({ client: down, key: uniqueKey(), commandTimeout: "300 millis" }))
        )
        expect(makeError).toBeInstanceOf(TokenCacheError)
        expect(makeError.message).toMatch(/not ready/)

        const client = new Redis({ host: "127.0.0.1", port: server().port, enableOfflineQueue: false })
        client.on("error", () => {})
        const tokens = yield* RedisTokenCache.make({ client, key: uniqueKey(), commandTimeout: "300 millis" })
        client.disconnect()
        const getError = yield* Effect.flip(tokens.get)
        expect(getError).toBeInstanceOf(TokenCacheError)
        expect(getError.message).toContain(`127.0.0.1:${server().port}`)
        const setError = yield* Effect.flip(
          tokens.set(token({ expiresAt: nowSeconds() + 60, refreshToken: "rt-secret-abcdef" }))
        )
        expect(setError).toBeInstanceOf(TokenCacheError)
        for (const text of [setError.message, String(setError), JSON.stringify(setError), String(setError.cause)]) {
          expect(text).not.toContain("at-secret-123456")
          expect(text).not.toContain("rt-secret-abcdef")
        }
        expect(yield* Effect.flip(tokens.withLock!(Effect.void))).toBeInstanceOf(TokenCacheError)
      })
  )

  it.live(
    "withLock: a release that failed (Redis away) is retried in the background; the lock goes long before its TTL",
    () =>
      Effect.gen(function* () {
        const proxy = yield* Effect.acquireRelease(
          fromPromise(() => startProxy(server().port)),
          (p) => fromPromise(() => p.close())
        )
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        const tokens = yield* RedisTokenCache.make({ url: proxy.url, key, commandTimeout: "300 millis" })
        yield* tokens.withLock!(Effect.sync(() => proxy.cut()))
        expect(yield* fromPromise(() => admin().exists(lockKey))).toBe(1)
        yield* Effect.sleep("1500 millis")
        expect(yield* fromPromise(() => admin().exists(lockKey))).toBe(1)
        const cutFor = Date.now()
        proxy.restore()
        yield* eventually(
          Effect.map(
            fromPromise(() => admin().exists(lockKey)),
            (n) => n === 0
          ),
          4000
        )
        expect(Date.now() - cutFor).toBeLessThan(4000)
        expect(yield* tokens.withLock!(Effect.succeed("next"))).toBe("next")
      }),
    20_000
  )

  it.live(
    "Redis away: a command waits for it up to commandTimeout; once a wait ran out, commands fail at once until Redis answers",
    () =>
      Effect.gen(function* () {
        const proxy = yield* Effect.acquireRelease(
          fromPromise(() => startProxy(server().port)),
          (p) => fromPromise(() => p.close())
        )
        const tokens = yield* RedisTokenCache.make({ url: proxy.url, key: uniqueKey(), commandTimeout: "1500 millis" })
        yield* tokens.set(token({ expiresAt: nowSeconds() + 60 }))
        proxy.cut()
        const restored = yield* Effect.forkChild(Effect.delay(Effect.sync(proxy.restore), "400 millis"))
        const [waited, read] = yield* Effect.timed(tokens.get)
        yield* Fiber.join(restored)
        expect(Option.isSome(read)).toBe(true)
        expect(Duration.toMillis(waited)).toBeGreaterThanOrEqual(300)

        proxy.cut()
        yield* Effect.sleep("50 millis")
        const [first, firstError] = yield* Effect.timed(Effect.flip(tokens.get))
        expect(firstError).toBeInstanceOf(TokenCacheError)
        expect(Duration.toMillis(first)).toBeGreaterThanOrEqual(1000)
        const [second, secondError] = yield* Effect.timed(Effect.flip(tokens.get))
        expect(secondError).toBeInstanceOf(TokenCacheError)
        expect(Duration.toMillis(second)).toBeLessThan(500)

        proxy.restore()
        yield* eventually(Effect.map(Effect.result(tokens.get), Result.isSuccess), 5000)
      }),
    20_000
  )

  it.live(
    "a Redis error reply (wrong password) is a TokenCacheError without the password; an owned connection closes with its scope",
    () =>
      Effect.gen(function* () {
        const user = `user-${randomUUID().slice(0, 8)}`
        yield* fromPromise(() => admin().call("ACL", "SETUSER", user, "on", ">right-pa55", "~*", "+@all"))
        const error = yield* Effect.flip(
          Effect.scoped(
            RedisTokenCache.make({ url: `redis://${user}:wrong-pa55@127.0.0.1:${server().port}`, key: uniqueKey() })
          )
        )
        expect(error).toBeInstanceOf(TokenCacheError)
        expect(error.message).toMatch(/WRONGPASS|invalid username-password/)
        expect(JSON.stringify(error) + error.message + String(error.cause)).not.toContain("wrong-pa55")

        const key = uniqueKey()
        const tokens = yield* Effect.scoped(
          Effect.tap(
            RedisTokenCache.make({ url: `redis://${user}:right-pa55@127.0.0.1:${server().port}`, key }),
            (tokens) => tokens.set(token({ expiresAt: nowSeconds() + 60 }))
          )
        )
        expect(yield* fromPromise(() => admin().exists(key))).toBe(1)
        expect(Exit.isFailure(yield* Effect.exit(tokens.get))).toBe(true)
      })
  )

  it.live("a borrowed client stays open after the scope; an owned connection is closed with it", () =>
    Effect.gen(function* () {
      const client = yield* Effect.acquireRelease(
        fromPromise(async () => {
          const redis = new Redis({ host: "127.0.0.1", port: server().port, lazyConnect: true })
          await redis.connect()
          return redis
        }),
        (redis) => fromPromise(() => redis.quit())
      )
      const key = uniqueKey()
      const connections = () =>
        fromPromise(
          async () =>
            String(await admin().client("LIST"))
              .trim()
              .split("\n").length
        )
      const before = yield* connections()
      const scope = yield* Scope.make()
      const borrowed = yield* Scope.provide(scope)(RedisTokenCache.make({ client, key }))
      yield* Scope.provide(scope)(cache({ key }))
      expect(yield* connections()).toBe(before + 1)
      yield* borrowed.set(token({ expiresAt: nowSeconds() + 60 }))
      yield* Scope.close(scope, Exit.void)
      yield* eventually(Effect.map(connections(), (n) => n === before))
      expect(client.status).toBe("ready")
      expect(yield* fromPromise(() => client.exists(key))).toBe(1)
    })
  )

  it.live("invalid options are a ConfigurationError naming the option", () =>
    Effect.gen(function* () {
      const client = new Redis({ lazyConnect: true })
      const cases: ReadonlyArray<readonly [RedisTokenCache.Options, string]> = [
        [{ key: "" }, "key"],
        [{ key: "k", url: "http://127.0.0.1:6379" }, "redis://"],
        [{ key: "k", url: "not a url" }, "url"],
        [{ key: "k", url: server().url, client }, "client"],
        [{ key: "k", url: server().url, lockTtl: 0 }, "lockTtl"],
        [{ key: "k", url: server().url, lockWait: "-1 seconds" }, "lockWait"],
        [{ key: "k", url: server().url, commandTimeout: Number.NaN }, "commandTimeout"],
        [{ key: "k", url: server().url, pollInterval: Infinity }, "pollInterval"],
        [{ key: "k", url: server().url, lockTtl: 2 ** 31 }, "lockTtl"]
      ]
      for (const [options, named] of cases) {
        const error = yield* Effect.flip(Effect.scoped(RedisTokenCache.make(options)))
        expect(error._tag, JSON.stringify(options.key)).toBe("ConfigurationError")
        expect(error.message).toContain(named)
      }
      const notObject = yield* Effect.flip(Effect.scoped(RedisTokenCache.make(undefined as never)))
      expect(notObject._tag).toBe("ConfigurationError")
      client.disconnect()
    })
  )

  it.live(
    "layer provides the cache; connect gives a Promise-friendly cache with close(), failures reject with the SDK's error",
    () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        yield* Effect.gen(function* () {
          const shared = yield* RedisTokenCache.RedisTokenCache
          yield* shared.set(token({ expiresAt: nowSeconds() + 60 }))
        }).pipe(Effect.provide(RedisTokenCache.layer({ url: server().url, key })))
        expect(yield* fromPromise(() => admin().exists(key))).toBe(1)

        const tokens = yield* fromPromise(() => RedisTokenCache.connect({ url: server().url, key }))
        expect(Option.isSome(yield* tokens.get)).toBe(true)
        yield* fromPromise(() => tokens.close())
        yield* fromPromise(() => tokens[Symbol.asyncDispose]())
        expect(Exit.isFailure(yield* Effect.exit(tokens.get))).toBe(true)

        const port = yield* fromPromise(freePort)
        const rejected = yield* fromPromise(() =>
          RedisTokenCache.connect({ url: `redis://127.0.0.1:${port}`, key }).then(
            () => undefined,
            (error: unknown) => error
          )
        )
        expect(rejected).toBeInstanceOf(TokenCacheError)
      })
  )
})
