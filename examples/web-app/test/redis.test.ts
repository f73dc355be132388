import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Redis } from "ioredis"
import { errorCodeOf, get, setCookieOf, signIn, startApp } from "./support/flow.js"
import { redisServerBinary, startRedis } from "./support/redis.js"

const required = process.env.SERVICE_SDK_REQUIRE_REDIS === "1"
if (redisServerBinary === undefined) {
  console.warn("\n⚠ web-app Redis tests SKIPPED: redis-server is not installed (apt-get install redis-server)\n")
}

describe("web app with REDIS_URL: tokens and sessions in Redis", () => {
  it.runIf(required && redisServerBinary === undefined)(
    "redis-server must be installed where SERVICE_SDK_REQUIRE_REDIS=1",
    () => {
      expect.fail("redis-server is missing, so the web app Redis tests would be skipped")
    }
  )

  describe.skipIf(redisServerBinary === undefined)("with redis-server", () => {
    let redis: { readonly url: string; readonly stop: () => Promise<void> }
    let admin: Redis
    beforeAll(async () => {
      redis = await startRedis(redisServerBinary!)
      admin = new Redis(redis.url)
    }, 30_000)
    afterAll(async () => {
      admin?.disconnect()
      await redis?.stop()
    })

    it.scopedLive("two app processes share sessions and tokens; keys hold no session id; logout removes them", () =>
      Effect.gen(function* () {
        const { app, emulator } = yield* startApp({ redisUrl: redis.url, redisPrefix: "t1:" })
        expect(app.store).toBe("redis")
        const alice = yield* signIn(app.url, "alice")
        const bob = yield* signIn(app.url, "bob")
        const keys = yield* Effect.promise(() => admin.keys("t1:*"))
        expect(keys.some((key) => key.startsWith("t1:sessions:user:"))).toBe(true)
        expect(keys.some((key) => key.startsWith("t1:tokens:"))).toBe(true)
        for (const key of keys) {
          expect(key).not.toContain(alice.cookie)
          expect(key).not.toContain(bob.cookie)
        }
        // a pending sign-in was taken (GETDEL): none left
        expect(keys.filter((key) => key.startsWith("t1:sessions:pending:"))).toEqual([])

        // a second instance of the app on the same Redis (as behind a load balancer) knows both sessions
        const second = yield* startApp({
          redisUrl: redis.url,
          redisPrefix: "t1:",
          clientId: emulator.clientId,
          clientSecret: emulator.clientSecret,
          authUrl: emulator.authUrl,
          apiUrl: emulator.apiUrl
        })
        const tokenRequests = (yield* emulator.stats).tokenRequests.total
        const alicePage = yield* get(second.app.url, alice.cookie)
        expect(alicePage.status).toBe(200)
        expect(alicePage.text).toContain('<dd id="user-id">alice</dd>')
        expect((yield* get(second.app.url, bob.cookie)).text).toContain('<dd id="user-id">bob</dd>')
        // the tokens came from Redis: no new token request
        expect((yield* emulator.stats).tokenRequests.total).toBe(tokenRequests)

        // logout on one instance ends the session on both
        expect(
          (yield* get(`${second.app.url}/logout`, alice.cookie, {
            method: "POST",
            headers: { origin: second.app.url }
          })).status
        ).toBe(303)
        expect(errorCodeOf((yield* get(app.url, alice.cookie)).text)).toBe("session_invalid")
        expect((yield* get(app.url, bob.cookie)).text).toContain('<dd id="user-id">bob</dd>')
      })
    )

    it.scopedLive("a callback with another state leaves the pending sign-in in Redis; the right one takes it", () =>
      Effect.gen(function* () {
        const { app } = yield* startApp({ redisUrl: redis.url, redisPrefix: "t3:" })
        const login = yield* get(`${app.url}/login?login_hint=dave`)
        const pending = setCookieOf(login)!
        const consent = yield* get(login.headers.get("location")!)
        const pendingKeys = () => Effect.promise(() => admin.keys("t3:sessions:pending:*"))
        expect(yield* pendingKeys()).toHaveLength(1)
        for (const forged of ["/callback?error=x", "/callback?error=x&state=nope", "/callback?code=c&state=nope"]) {
          expect(errorCodeOf((yield* get(`${app.url}${forged}`, pending)).text), forged).toBe("state_mismatch")
        }
        expect(yield* pendingKeys()).toHaveLength(1)
        const callback = yield* get(consent.headers.get("location")!, pending)
        expect(callback.status).toBe(303)
        expect(yield* pendingKeys()).toEqual([])
        expect((yield* get(app.url, setCookieOf(callback)!)).text).toContain('<dd id="user-id">dave</dd>')
      })
    )

    it.scopedLive(
      "Redis down: pages say so (503), nothing crashes",
      () =>
        Effect.gen(function* () {
          const { app } = yield* startApp({ redisUrl: redis.url, redisPrefix: "t2:" })
          const alice = yield* signIn(app.url, "alice")
          yield* Effect.promise(() => admin.client("PAUSE", 7000, "ALL"))
          const page = yield* get(app.url, alice.cookie)
          expect(page.status).toBe(503)
          expect(errorCodeOf(page.text)).toBe("store_unavailable")
          expect(page.text).not.toContain(alice.cookie)
        }),
      30_000
    )
  })
})
