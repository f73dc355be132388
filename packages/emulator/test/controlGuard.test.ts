/**
 * Issue 10, point 7: a web page cannot drive the control API. Only `application/json` bodies and a loopback `Host`
 * (403 otherwise); an oversized body is answered 413, not a connection reset.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import { Emulator } from "../src/internal/effectApi.js"
import { isLoopbackHost } from "../src/internal/http.js"
import { request } from "./utils.js"

/** A raw request (fetch cannot set `Host`). */
const raw = (url: string, options: { method?: string; headers?: Record<string, string>; body?: string }) =>
  Effect.async<{ status: number; body: string }, Error>((resume) => {
    const req = Http.request(url, { method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk) => {
        body += chunk
      })
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end(options.body)
  })

describe("control API guards", () => {
  it.scopedLive("a cross-origin text/plain or form POST is refused with 403 and changes nothing", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      for (const contentType of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x"
      ]) {
        const reply = yield* request(`${emulator.authUrl}/__emulator/config`, {
          method: "POST",
          headers: { "content-type": contentType },
          body: JSON.stringify({ autoApprove: true })
        })
        expect(reply.status).toBe(403)
      }
      // a body-less POST from a page (browsers send Origin): refused (curl's is accepted: requestLog.test.ts)
      const noType = yield* raw(`${emulator.authUrl}/__emulator/reset`, {
        method: "POST",
        headers: { origin: "https://evil.example" }
      })
      expect(noType.status).toBe(403)
      const config = yield* request(`${emulator.authUrl}/__emulator/config`)
      expect(config.json.autoApprove).toBe(false)
      const ok = yield* request(`${emulator.authUrl}/__emulator/config`, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ autoApprove: true })
      })
      expect(ok.status).toBe(200)
      expect(ok.json.autoApprove).toBe(true)
    })
  )

  it.scopedLive("a non-loopback Host (DNS rebinding) gets 403, even for GET /stats; loopback names pass", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const url = `${emulator.authUrl}/__emulator/stats`
      for (const host of ["evil.example", `evil.example:${emulator.port}`, "127.0.0.1.evil.example", "0.0.0.0"]) {
        const reply = yield* raw(url, { headers: { host } })
        expect(reply.status, host).toBe(403)
        expect(reply.body).not.toContain("tokenRequests")
      }
      for (const host of [`127.0.0.1:${emulator.port}`, `localhost:${emulator.port}`, "[::1]"]) {
        expect((yield* raw(url, { headers: { host } })).status, host).toBe(200)
      }
    })
  )

  it.scopedLive("an oversized body gets 413 (a body without Content-Length 411), and the emulator still answers", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const big = JSON.stringify({ target: "api", count: 1, body: "x".repeat(2 * 1024 * 1024) })
      const declared = yield* request(`${emulator.authUrl}/__emulator/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big
      })
      expect(declared.status).toBe(413)
      const chunked = yield* raw(`${emulator.authUrl}/__emulator/faults`, {
        method: "POST",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        body: JSON.stringify({ target: "api", count: 1, body: "y".repeat(100 * 1024) })
      })
      expect(chunked.status).toBe(411)
      expect((yield* request(`${emulator.authUrl}/__emulator/faults`)).json.pending).toEqual({ token: 0, api: 0 })
    })
  )

  it("isLoopbackHost", () => {
    for (const host of ["127.0.0.1", "127.0.0.1:80", "localhost:4000", "LOCALHOST", "[::1]:9", "127.1.2.3"]) {
      expect(isLoopbackHost(host), host).toBe(true)
    }
    for (const host of [undefined, "", "example.com", "localhost.example", "[::2]", "127.0.0.1:x", "10.0.0.1"]) {
      expect(isLoopbackHost(host), String(host)).toBe(false)
    }
  })
})
