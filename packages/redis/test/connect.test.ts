/**
 * Connecting (issue 28): a TLS mismatch between the URL and the server is a ConfigurationError that names it, at
 * once (not "no connection within 5s" after the command timeout, not a TokenCacheError), and so is a missing
 * `ioredis` peer (not a bare "Cannot find module", and importing the package needs none).
 */
import { RedisTokenCache } from "@service-sdk/redis"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { vi } from "vitest"
import { ConfigurationError } from "@service-sdk/effect"
import { describeRedis } from "./support/redisServer.js"
import { startTlsRedisServer, type TlsRedisServer } from "./support/tlsServer.js"

/** Long enough that an answer within it is no timeout. */
const COMMAND_TIMEOUT_MS = 20_000

const connectError = (url: string) =>
  Effect.gen(function* () {
    const started = Date.now()
    const error = yield* Effect.flip(
      Effect.scoped(RedisTokenCache.make({ url, key: "test:connect", commandTimeout: COMMAND_TIMEOUT_MS }))
    )
    return { error, took: Date.now() - started }
  })

describeRedis("a TLS mismatch", (server) => {
  let tls: TlsRedisServer | string = "not started"
  beforeAll(async () => {
    tls = await startTlsRedisServer()
    if (typeof tls === "string") console.warn(`\n*** SKIPPING the redis:// to a TLS server test: ${tls}. ***\n`)
  }, 60_000)
  afterAll(async () => {
    if (typeof tls !== "string") await tls.stop()
  })

  it.live("rediss:// to a plain server: a ConfigurationError that says so, long before the command timeout", () =>
    Effect.gen(function* () {
      const { error, took } = yield* connectError(server().url.replace("redis://", "rediss://"))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("rediss://")
      expect(error.message).toContain("speaks plain Redis")
      expect(error.message).toContain("use redis://")
      expect(took).toBeLessThan(COMMAND_TIMEOUT_MS / 2)
    })
  )

  it.live("redis:// to a TLS server: a ConfigurationError that says so", ({ skip }) =>
    Effect.gen(function* () {
      if (typeof tls === "string") return skip()
      const { error, took } = yield* connectError(`redis://127.0.0.1:${tls.port}`)
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("speaks TLS")
      expect(error.message).toContain("use rediss://")
      expect(took).toBeLessThan(COMMAND_TIMEOUT_MS / 2)
    })
  )

  it.live("connect (plain code) rejects with the same ConfigurationError", () =>
    Effect.promise(async () => {
      const error = await RedisTokenCache.connect({
        url: server().url.replace("redis://", "rediss://"),
        key: "test:connect"
      }).then(
        () => undefined,
        (error: unknown) => error
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect((error as ConfigurationError).message).toContain("speaks plain Redis")
    })
  )
})

describe("a missing ioredis", () => {
  it.live("the package imports without it; a url is a ConfigurationError that says to install it", () =>
    Effect.gen(function* () {
      vi.resetModules()
      // the app's module resolver cannot find ioredis, as in an app that never installed the peer dependency
      vi.doMock("ioredis", () => {
        throw Object.assign(new Error("Cannot find package 'ioredis' imported from the app"), {
          code: "ERR_MODULE_NOT_FOUND"
        })
      })
      try {
        const fresh = yield* Effect.promise(() => import("@service-sdk/redis"))
        const error = yield* Effect.flip(
          Effect.scoped(fresh.RedisTokenCache.make({ url: "redis://127.0.0.1:9", key: "test:peer" }))
        )
        // a ConfigurationError of the module graph loaded without ioredis
        expect(error._tag).toBe("ConfigurationError")
        expect(error.message).toContain("ioredis")
        expect(error.message).toContain("npm install ioredis@5")
        const rejected = yield* Effect.promise(() =>
          fresh.RedisTokenStore.connect({ url: "redis://127.0.0.1:9", prefix: "test:peer:" }).then(
            () => undefined,
            (error: unknown) => error as { _tag?: string; message?: string }
          )
        )
        expect(rejected?._tag).toBe("ConfigurationError")
        expect(rejected?.message).toContain("npm install ioredis@5")
      } finally {
        vi.doUnmock("ioredis")
        vi.resetModules()
      }
    })
  )
})
