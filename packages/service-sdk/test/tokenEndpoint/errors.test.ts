import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either } from "effect"
import {
  ApiError,
  AuthenticationError,
  ConfigurationError,
  isServiceError,
  RateLimitError,
  ServiceError,
  TokenCacheError,
  TransportError
} from "@service-sdk/effect"
import * as util from "node:util"

const samples = [
  ["AuthenticationError", new AuthenticationError({ message: "token endpoint rejected the request" })],
  ["ConfigurationError", new ConfigurationError({ message: "missing clientId" })],
  ["TransportError", new TransportError({ message: "cannot reach the token endpoint" })],
  ["ApiError", new ApiError({ message: "not found", status: 404 })],
  ["RateLimitError", new RateLimitError({ message: "rate limited", retryAfter: Duration.seconds(5) })],
  ["TokenCacheError", new TokenCacheError({ message: "cannot write the cache" })]
] as const

describe("ServiceError", () => {
  it.each(samples)("%s has its literal _tag, name and the ServiceError base", (tag, error) => {
    expect(error._tag).toBe(tag)
    expect(error.name).toBe(tag)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toBeInstanceOf(Error)
    expect(isServiceError(error)).toBe(true)
    expect(error.toString()).toBe(`${tag}: ${error.message}`)
  })

  it("isServiceError rejects other errors and values", () => {
    expect(isServiceError(new Error("x"))).toBe(false)
    expect(isServiceError({ _tag: "AuthenticationError", message: "x" })).toBe(false)
    expect(isServiceError(undefined)).toBe(false)
  })

  it.effect("errors are yieldable: `yield*` fails the effect with the instance", () =>
    Effect.gen(function* () {
      const error = new AuthenticationError({ message: "no token: call exchangeCode first" })
      const program = Effect.gen(function* () {
        yield* error
        return "unreachable"
      })
      const failure = yield* Effect.flip(program)
      expect(failure).toBe(error)
    })
  )

  it.effect.each(samples)("Effect.catchTag catches %s by its tag and no other", ([tag, error]) =>
    Effect.gen(function* () {
      const failing = Effect.fail(error) as Effect.Effect<string, (typeof samples)[number][1]>
      const caught = yield* Effect.catchTag(failing, tag as never, () => Effect.succeed("caught"))
      expect(caught).toBe("caught")
      const other = tag === "ApiError" ? "TransportError" : "ApiError"
      const missed = yield* Effect.either(Effect.catchTag(failing, other as never, () => Effect.succeed("wrong")))
      expect(Either.isLeft(missed)).toBe(true)
    })
  )

  it("AuthenticationError carries status and the decoded OAuth payload", () => {
    const error = new AuthenticationError({
      message: "token endpoint rejected the request (400 invalid_grant)",
      status: 400,
      payload: { error: "invalid_grant", error_description: "Refresh token revoked" }
    })
    expect(error.status).toBe(400)
    expect(error.payload).toEqual({ error: "invalid_grant", error_description: "Refresh token revoked" })
    expect(error.message).toBe("token endpoint rejected the request (400 invalid_grant)")
    const json = JSON.parse(JSON.stringify(error))
    expect(json).toMatchObject({
      _tag: "AuthenticationError",
      message: error.message,
      status: 400,
      payload: { error: "invalid_grant" }
    })
  })

  it("the other errors carry their extra fields", () => {
    const cause = new Error("ECONNREFUSED")
    const transport = new TransportError({ message: "token endpoint answered 503", status: 503, cause })
    expect(transport.status).toBe(503)
    expect(transport.cause).toBe(cause)
    const api = new ApiError({ message: "forbidden", status: 403, payload: { error: { status: 403 } } })
    expect(api.status).toBe(403)
    expect(api.payload).toEqual({ error: { status: 403 } })
    const limited = new RateLimitError({ message: "slow down", retryAfter: Duration.seconds(90) })
    expect(Duration.toSeconds(limited.retryAfter)).toBe(90)
    const cache = new TokenCacheError({ message: "disk full", cause })
    expect(cache.cause).toBe(cause)
  })

  it("util.inspect shows the tag and message, and JSON the fields", () => {
    const error = new TransportError({ message: "token request timed out after 30s" })
    const inspected = util.inspect(error)
    expect(inspected).toContain("TransportError")
    expect(inspected).toContain("token request timed out after 30s")
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ _tag: "TransportError", message: error.message })
  })
})
