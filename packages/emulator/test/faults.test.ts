import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Emulator } from "../src/internal/effectApi.js"
import { ALBUM_ID, api, clientCredentials, request, tokenRequest } from "./utils.js"

const postFault = (emulator: Emulator.Service, fault: unknown) =>
  request(`${emulator.authUrl}/__emulator/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(fault)
  })

describe("fault injection", () => {
  it.scopedLive("status + body + headers over HTTP: 429 with Retry-After, then normal again", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator)
      const queued = yield* postFault(emulator, {
        target: "api",
        count: 2,
        status: 429,
        body: '{"error":{"status":429,"message":"slow down"}}',
        headers: { "Retry-After": "2" }
      })
      expect(queued.status).toBe(200)
      for (let i = 0; i < 2; i++) {
        const reply = yield* api(emulator, `/albums/${ALBUM_ID}`, token)
        expect(reply.status).toBe(429)
        expect(reply.headers.get("retry-after")).toBe("2")
        expect(reply.json).toEqual({ error: { status: 429, message: "slow down" } })
      }
      expect((yield* api(emulator, `/albums/${ALBUM_ID}`, token)).status).toBe(200)
    })
  )

  it.scopedLive("status only: a fitting JSON error body for each target", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      yield* emulator.injectFault({ target: "token", status: 503 })
      const token = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(token.status).toBe(503)
      expect(token.json).toEqual({ error: "temporarily_unavailable", error_description: expect.any(String) })
      yield* emulator.injectFault({ target: "api", status: 500 })
      const access = yield* clientCredentials(emulator)
      const reply = yield* api(emulator, `/albums/${ALBUM_ID}`, access)
      expect(reply.status).toBe(500)
      expect(reply.json).toEqual({ error: { status: 500, message: expect.any(String) } })
    })
  )

  it.scopedLive("delayMs waits, then answers normally", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      yield* emulator.injectFault({ target: "token", delayMs: 300 })
      const started = performance.now()
      const reply = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(performance.now() - started).toBeGreaterThanOrEqual(290)
      expect(reply.status).toBe(200)
      const quick = performance.now()
      yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(performance.now() - quick).toBeLessThan(250)
    })
  )

  it.scopedLive("delayMs with a status delays the faulted answer", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      yield* emulator.injectFault({ target: "token", delayMs: 200, status: 502 })
      const started = performance.now()
      const reply = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(performance.now() - started).toBeGreaterThanOrEqual(190)
      expect(reply.status).toBe(502)
    })
  )

  it.scopedLive("reset destroys the connection: fetch rejects; the next request works", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator)
      yield* emulator.injectFault({ target: "api", reset: true })
      const failed = yield* Effect.either(api(emulator, `/albums/${ALBUM_ID}`, token))
      expect(Either.isLeft(failed)).toBe(true)
      expect((yield* api(emulator, `/albums/${ALBUM_ID}`, token)).status).toBe(200)
      yield* emulator.injectFault({ target: "token", reset: true })
      const tokenFailed = yield* Effect.either(tokenRequest(emulator, { grant_type: "client_credentials" }))
      expect(Either.isLeft(tokenFailed)).toBe(true)
      expect((yield* tokenRequest(emulator, { grant_type: "client_credentials" })).status).toBe(200)
    })
  )

  it.scopedLive("malformed answers 200 with a body that is not JSON", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      yield* emulator.injectFault({ target: "token", malformed: true })
      const reply = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
      expect(() => JSON.parse(reply.text)).toThrow()
      const token = yield* clientCredentials(emulator)
      yield* emulator.injectFault({ target: "api", malformed: true })
      const album = yield* api(emulator, `/albums/${ALBUM_ID}`, token)
      expect(album.status).toBe(200)
      expect(() => JSON.parse(album.text)).toThrow()
    })
  )

  it.scopedLive("faults queue in order and only touch their target", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator)
      yield* emulator.injectFault({ target: "api", status: 500, count: 1 })
      yield* emulator.injectFault({ target: "api", status: 502, count: 2 })
      yield* emulator.injectFault({ target: "api", status: 503 })
      expect((yield* tokenRequest(emulator, { grant_type: "client_credentials" })).status).toBe(200)
      const statuses: Array<number> = []
      for (let i = 0; i < 5; i++) statuses.push((yield* api(emulator, `/albums/${ALBUM_ID}`, token)).status)
      expect(statuses).toEqual([500, 502, 502, 503, 200])
    })
  )

  it.scopedLive("faulted token requests are counted in stats", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      yield* emulator.injectFault({ target: "token", status: 500, count: 2 })
      yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: "x" })
      const stats = yield* emulator.stats
      expect(stats.tokenRequests).toEqual({ total: 2, client_credentials: 1, authorization_code: 0, refresh_token: 1 })
    })
  )

  it.scopedLive("invalid faults are rejected: 400 over HTTP, EmulatorError in code", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      for (const fault of [
        { target: "db", status: 500 },
        { target: "api", count: 0 },
        { target: "api", status: 42 },
        { target: "api", headers: { "Bad Header": "x" } },
        { target: "api", unknown: true }
      ]) {
        const reply = yield* postFault(emulator, fault)
        expect(reply.status, JSON.stringify(fault)).toBe(400)
      }
      const notJson = yield* request(`${emulator.authUrl}/__emulator/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{"
      })
      expect(notJson.status).toBe(400)
      const error = yield* Effect.flip(emulator.injectFault({ target: "api", count: -1 }))
      expect(error._tag).toBe("EmulatorError")
      const pending = yield* request(`${emulator.authUrl}/__emulator/faults`)
      expect(pending.json.pending).toEqual({ token: 0, api: 0 })
    })
  )
})
