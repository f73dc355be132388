import { randomUUID } from "node:crypto"
import { RedisTokenCache } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import { TokenCacheError, TokenInfo } from "@service-sdk/effect"
import { startProxy } from "./support/proxy.js"
import { describeRedis, freePort } from "./support/redisServer.js"

const uniqueKey = () => `test:token:${randomUUID()}`

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

/** Runs `check` every 10 ms until it holds, for at most `millis`. */
const eventually = <E>(check: Effect.Effect<boolean, E>, millis = 2000) =>
  Effect.gen(function* () {
    for (let waited = 0; waited < millis; waited += 10) {
      if (yield* check) return
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.die(new Error(`condition not met within ${millis} ms`))
  })

const fromPromise = <A>(f: () => Promise<A>) => Effect.promise(f)

describeRedis("RedisTokenCache", (server) => {
  const admin = () => server().admin
  const cache = (options: Partial<RedisTokenCache.Options> & { readonly key: string }) =>
    RedisTokenCache.make({ url: server().url, ...options })

  it.scopedLive("an empty key reads as none; a token set is read back, by another connection too", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const first = yield* cache({ key })
      const second = yield* cache({ key })
      expect(Option.isNone(yield* first.get)).toBe(true)
      const stored = token({ expiresAt: nowSeconds() + 3600, refreshToken: "rt-secret-abcdef", scope: "a b" })
      yield* first.set(stored)
      const read = yield* second.get
      expect(Option.isSome(read)).toBe(true)
      const value = Option.getOrThrow(read)
      expect(Redacted.value(value.accessToken)).toBe("at-secret-123456")
      expect(value.expiresAt).toBe(stored.expiresAt)
      expect(Redacted.value(value.refreshToken!)).toBe("rt-secret-abcdef")
      expect(value.scope).toBe("a b")
      const raw = JSON.parse((yield* fromPromise(() => admin().get(key))) ?? "null")
      expect(raw).toEqual({
        access_token: "at-secret-123456",
        expires_at: stored.expiresAt,
        refresh_token: "rt-secret-abcdef",
        scope: "a b"
      })
    })
  )

  it.scopedLive("an entry without refresh token expires a little after the token; one with a refresh token never", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* cache({ key })
      yield* tokens.set(token({ expiresAt: nowSeconds() + 100 }))
      const ttl = yield* fromPromise(() => admin().pttl(key))
      expect(ttl).toBeGreaterThan(100_000)
      expect(ttl).toBeLessThanOrEqual(160_000 + 1000)

      yield* tokens.set(token({ expiresAt: nowSeconds() + 100, refreshToken: "rt-secret-abcdef" }))
      expect(yield* fromPromise(() => admin().pttl(key))).toBe(-1)

      // An access token long expired: the entry stays because of its refresh token.
      yield* tokens.set(token({ expiresAt: nowSeconds() - 7200, refreshToken: "rt-secret-abcdef" }))
      expect(yield* fromPromise(() => admin().pttl(key))).toBe(-1)
      expect(Option.isSome(yield* tokens.get)).toBe(true)

      // Without one, an already expired token is still stored briefly, then goes.
      yield* tokens.set(token({ expiresAt: nowSeconds() - 7200 }))
      const short = yield* fromPromise(() => admin().pttl(key))
      expect(short).toBeGreaterThan(0)
      expect(short).toBeLessThanOrEqual(1000)
    })
  )

  it.scopedLive("an invalid entry of ours (an access_token field, invalid) reads as none", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* cache({ key })
      for (const text of ['{"access_token": 1, "expires_at": 5}', '{"access_token": "x"}', '{"access_token": null}']) {
        yield* fromPromise(() => admin().set(key, text))
        expect(Option.isNone(yield* tokens.get)).toBe(true)
      }
      yield* fromPromise(() => admin().set(key, '{"access_token": "x", "expires_at": 5}'))
      expect(Option.map(yield* tokens.get, (found) => found.expiresAt)).toEqual(Option.some(5))
    })
  )

  it.scopedLive("withLock: concurrent holders on separate connections never overlap", () =>
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

  it.scopedLive("withLock: the lock is released when the body fails", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* cache({ key, lockWait: "1 second" })
      const failed = yield* Effect.exit(tokens.withLock!(Effect.fail("boom" as const)))
      expect(failed).toEqual(Exit.fail("boom"))
      expect(yield* fromPromise(() => admin().exists(RedisTokenCache.lockKey(key)))).toBe(0)
      expect(yield* tokens.withLock!(Effect.succeed(42))).toBe(42)
    })
  )

  it.scopedLive(
    "withLock: the lock is released when the holder is interrupted; an interrupted waiter takes nothing",
    () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        const holder = yield* cache({ key })
        const other = yield* cache({ key, pollInterval: "5 millis" })
        const entered = yield* Deferred.make<void>()
        const holding = yield* Effect.fork(
          holder.withLock!(Effect.zipRight(Deferred.succeed(entered, undefined), Effect.never))
        )
        yield* Deferred.await(entered)
        expect(yield* fromPromise(() => admin().exists(lockKey))).toBe(1)

        // A waiter on the held lock, interrupted while it polls.
        const ran = yield* Ref.make(false)
        const waiter = yield* Effect.fork(other.withLock!(Ref.set(ran, true)))
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

  it.scopedLive(
    "withLock: waiting longer than lockWait is a TokenCacheError, and the holder's lock is left alone",
    () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        // another process of the fleet (owners are UUIDs; any other value is another application's, see neighbours)
        const someoneElse = randomUUID()
        yield* fromPromise(() => admin().set(lockKey, someoneElse, "PX", 10_000))
        const tokens = yield* cache({ key, lockWait: "200 millis", pollInterval: "20 millis" })
        const ran = yield* Ref.make(false)
        const error = yield* Effect.flip(tokens.withLock!(Ref.set(ran, true)))
        expect(error).toBeInstanceOf(TokenCacheError)
        expect(error._tag).toBe("TokenCacheError")
        expect(error.message).toContain(lockKey)
        expect(error.message).toContain(`127.0.0.1:${server().port}`)
        expect(yield* Ref.get(ran)).toBe(false)
        expect(yield* fromPromise(() => admin().get(lockKey))).toBe(someoneElse)
      })
  )

  it.scopedLive(
    "withLock: a holder whose lock was lost (expired and taken) does not release the new owner's lock",
    () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        const tokens = yield* cache({ key })
        const newOwner = randomUUID()
        yield* tokens.withLock!(fromPromise(() => admin().set(lockKey, newOwner, "PX", 10_000)))
        expect(yield* fromPromise(() => admin().get(lockKey))).toBe(newOwner)
        const ttl = yield* fromPromise(() => admin().pttl(lockKey))
        expect(ttl).toBeGreaterThan(5000)
      })
  )

  it.scopedLive(
    "withLock: a live holder keeps its lock beyond lockTtl; a crashed one's lock expires after lockTtl",
    () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        const holder = yield* cache({ key, lockTtl: "300 millis" })
        const other = yield* cache({ key, lockWait: "100 millis", pollInterval: "10 millis" })
        const during = yield* Effect.fork(
          holder.withLock!(
            Effect.gen(function* () {
              yield* Effect.sleep("700 millis")
              const stillHeld = yield* fromPromise(() => admin().exists(lockKey))
              const blocked = yield* Effect.either(other.withLock!(Effect.void))
              return { stillHeld, blocked }
            })
          )
        )
        const { blocked, stillHeld } = yield* Fiber.join(during)
        expect(stillHeld).toBe(1)
        expect(blocked._tag).toBe("Left")

        // A lock left by a process that died (no heartbeat) is free again after its TTL.
        yield* fromPromise(() => admin().set(lockKey, randomUUID(), "PX", 300))
        const patient = yield* cache({ key, lockWait: "2 seconds", pollInterval: "20 millis" })
        expect(yield* patient.withLock!(Effect.succeed("acquired"))).toBe("acquired")
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

  it.scopedLive(
    "Redis down under a borrowed client: make fails within commandTimeout; a client gone later fails get and set, never showing the token",
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
        const started = Date.now()
        const makeError = yield* Effect.flip(
          Effect.scoped(RedisTokenCache.make({ client: down, key: uniqueKey(), commandTimeout: "300 millis" }))
        )
        expect(makeError).toBeInstanceOf(TokenCacheError)
        expect(makeError.message).toContain(`127.0.0.1:${port}`)
        expect(makeError.message).toMatch(/not ready/)
        expect(Date.now() - started).toBeLessThan(2000)

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
        const lockError = yield* Effect.flip(tokens.withLock!(Effect.void))
        expect(lockError).toBeInstanceOf(TokenCacheError)
      })
  )

  it.live(
    "withLock: a release that failed (Redis away) is retried in the background; the lock goes long before its TTL",
    () =>
      Effect.gen(function* () {
        const proxy = yield* fromPromise(() => startProxy(server().port))
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        yield* Effect.scoped(
          Effect.gen(function* () {
            // the default lockTtl (10 s): a lock left behind would stop every process for that long
            const tokens = yield* RedisTokenCache.make({ url: proxy.url, key, commandTimeout: "300 millis" })
            yield* tokens.withLock!(
              Effect.sync(() => {
                proxy.cut() // Redis away just as the holder is done: its release cannot reach it
              })
            )
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
            const gone = Date.now() - cutFor
            expect(gone).toBeLessThan(4000)
            // the lock was deleted, not expired: its TTL (10 s) was nowhere near
            expect(yield* tokens.withLock!(Effect.succeed("next"))).toBe("next")
          })
        )
        yield* fromPromise(() => proxy.close())
      }),
    20_000
  )

  it.live(
    "Redis away: a command waits for it up to commandTimeout; once a wait ran out, commands fail at once until Redis answers",
    () =>
      Effect.gen(function* () {
        const proxy = yield* fromPromise(() => startProxy(server().port))
        const key = uniqueKey()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const tokens = yield* RedisTokenCache.make({ url: proxy.url, key, commandTimeout: "1500 millis" })
            yield* tokens.set(token({ expiresAt: nowSeconds() + 60 }))
            // a short outage (a failover): the read waits it out and is answered
            proxy.cut() // the read below is sent before the client sees the connection drop: in flight
            const restored = yield* Effect.fork(Effect.delay(Effect.sync(proxy.restore), "400 millis"))
            const [waited, read] = yield* Effect.timed(tokens.get)
            yield* Fiber.join(restored)
            expect(Option.isSome(read)).toBe(true)
            expect(Duration.toMillis(waited)).toBeGreaterThanOrEqual(300)

            // a long outage: the first command waits its whole timeout, the next ones fail at once
            proxy.cut()
            yield* Effect.sleep("50 millis")
            const [first, firstError] = yield* Effect.timed(Effect.flip(tokens.get))
            expect(firstError).toBeInstanceOf(TokenCacheError)
            expect(Duration.toMillis(first)).toBeGreaterThanOrEqual(1000)
            const [second, secondError] = yield* Effect.timed(Effect.flip(tokens.get))
            expect(secondError).toBeInstanceOf(TokenCacheError)
            expect(Duration.toMillis(second)).toBeLessThan(500)

            // Redis back: answered again (after the client reconnects), and waiting is back too
            proxy.restore()
            yield* eventually(
              Effect.map(Effect.either(tokens.get), (result) => result._tag === "Right"),
              5000
            )
            proxy.cut()
            yield* Effect.sleep("50 millis")
            const back = yield* Effect.fork(Effect.delay(Effect.sync(proxy.restore), "400 millis"))
            expect(Option.isSome(yield* tokens.get)).toBe(true)
            yield* Fiber.join(back)
          })
        )
        yield* fromPromise(() => proxy.close())
      }),
    20_000
  )

  it.live("the default lockTtl is 10 s, extended at least every third of it", () =>
    Effect.gen(function* () {
      expect(RedisTokenCache.defaults.lockTtl).toEqual(Duration.seconds(10))
      const key = uniqueKey()
      const lockKey = RedisTokenCache.lockKey(key)
      const ttls = yield* Effect.scoped(
        Effect.flatMap(cache({ key }), (tokens) =>
          tokens.withLock!(
            Effect.gen(function* () {
              const seen: Array<number> = []
              for (let i = 0; i < 4; i++) {
                seen.push(yield* fromPromise(() => admin().pttl(lockKey)))
                yield* Effect.sleep("700 millis")
              }
              return seen
            })
          )
        )
      )
      expect(ttls[0]).toBeGreaterThan(9000)
      expect(ttls[0]).toBeLessThanOrEqual(10_000)
      // 2.1 s later it is still above two thirds: the heartbeat extended it
      expect(Math.min(...ttls)).toBeGreaterThan(10_000 * (2 / 3))
    })
  )

  it.live("a Redis error reply (wrong password) is a TokenCacheError without the password", () =>
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
        Effect.gen(function* () {
          const tokens = yield* RedisTokenCache.make({
            url: `redis://${user}:right-pa55@127.0.0.1:${server().port}`,
            key
          })
          yield* tokens.set(token({ expiresAt: nowSeconds() + 60 }))
          return tokens
        })
      )
      expect(yield* fromPromise(() => admin().exists(key))).toBe(1)
      // The connection closed with its scope.
      expect(Exit.isFailure(yield* Effect.exit(tokens.get))).toBe(true)
    })
  )

  it.scopedLive("a borrowed client stays open after the scope; an owned connection is closed with it", () =>
    Effect.gen(function* () {
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const redis = new Redis({ host: "127.0.0.1", port: server().port, lazyConnect: true })
          await redis.connect()
          return redis
        }),
        (redis) => Effect.promise(() => redis.quit())
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
      const borrowed = yield* Scope.extend(RedisTokenCache.make({ client, key }), scope)
      yield* Scope.extend(cache({ key }), scope)
      expect(yield* connections()).toBe(before + 1)
      yield* borrowed.set(token({ expiresAt: nowSeconds() + 60 }))
      yield* Scope.close(scope, Exit.void)
      yield* eventually(Effect.map(connections(), (n) => n === before))
      expect(client.status).toBe("ready")
      expect(yield* fromPromise(() => client.exists(key))).toBe(1)
    })
  )

  it.live("invalid options are a ConfigurationError", () =>
    Effect.gen(function* () {
      const client = new Redis({ lazyConnect: true })
      const cases: ReadonlyArray<RedisTokenCache.Options> = [
        { key: "" },
        { key: "k", url: "http://127.0.0.1:6379" },
        { key: "k", url: "not a url" },
        { key: "k", url: server().url, client },
        { key: "k", url: server().url, lockTtl: 0 },
        { key: "k", url: server().url, lockWait: "-1 seconds" }
      ]
      for (const options of cases) {
        const error = yield* Effect.flip(Effect.scoped(RedisTokenCache.make(options)))
        expect(error._tag).toBe("ConfigurationError")
      }
      client.disconnect()
    })
  )

  it.live("connect: a Promise-friendly cache with close(); failures reject with the SDK's error", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* fromPromise(() => RedisTokenCache.connect({ url: server().url, key }))
      yield* tokens.set(token({ expiresAt: nowSeconds() + 60 }))
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
