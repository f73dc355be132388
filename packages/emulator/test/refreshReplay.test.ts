import { describe, expect, it } from "@effect/vitest"
import { Emulator } from "../src/internal/effectApi.js"
import * as Effect from "effect/Effect"
import { tokenRequest } from "./utils.js"

// Refresh-token rotation (RFC 9700 §4.14.2): a rotated-out refresh token is never accepted again.
describe("emulator: strict rejection of a replayed refresh token", () => {
  it.scopedLive("with rotation, a rotated-out refresh token is invalid_grant; the new one works", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ rotateRefreshTokens: true })
      const signedIn = yield* emulator.signIn({ userId: "replay-user" })
      const first = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: signedIn.refresh_token
      })
      expect(first.status).toBe(200)
      const rotated = first.json.refresh_token as string
      expect(rotated).not.toBe(signedIn.refresh_token)

      const replay = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: signedIn.refresh_token
      })
      expect(replay.status).toBe(400)
      expect(replay.json.error).toBe("invalid_grant")
      const next = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: rotated })
      expect(next.status).toBe(200)
    })
  )

  it.scopedLive("the same refresh token presented twice at once (with latency): exactly one succeeds", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ rotateRefreshTokens: true, tokenLatencyMs: 200 })
      const signedIn = yield* emulator.signIn({ userId: "replay-user" })
      const replies = yield* Effect.all(
        Array.from({ length: 4 }, () =>
          tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: signedIn.refresh_token })
        ),
        { concurrency: "unbounded" }
      )
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 400, 400, 400])
      for (const reply of replies.filter((r) => r.status === 400)) expect(reply.json.error).toBe("invalid_grant")
    })
  )
})
