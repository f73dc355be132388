import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenStore } from "@service-sdk/effect"
import { get, signIn, startApp } from "./support/flow.js"

describe("web app: secrets never reach a log line or a page", () => {
  it.scopedLive("tokens, codes and session ids stay out of every log line (all levels) and every page", () => {
    const lines: Array<string> = []
    const logger = Logger.make((options) => {
      lines.push(Logger.logfmtLogger.log(options))
    })
    return Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const { app, emulator } = yield* startApp({ tokenStore: store })
      const alice = yield* signIn(app.url, "alice")
      const bob = yield* signIn(app.url, "bob")
      const pages = [
        yield* get(app.url, alice.cookie),
        yield* get(app.url, bob.cookie),
        // a revoked user: the refresh fails with invalid_grant, and the error path logs
        yield* Effect.gen(function* () {
          const token = Option.getOrThrow(yield* store("bob").get)
          yield* emulator.revoke(Redacted.value(token.accessToken))
          yield* emulator.revoke(Redacted.value(token.refreshToken!))
          return yield* get(app.url, bob.cookie)
        }),
        yield* get(`${app.url}/callback?code=canary-code&state=canary-state`, alice.pendingCookie)
      ]
      expect(pages[2]!.status).toBe(401)
      const aliceToken = Option.getOrThrow(yield* store("alice").get)
      const secrets = [
        Redacted.value(aliceToken.accessToken),
        Redacted.value(aliceToken.refreshToken!),
        new URL(alice.callbackUrl).searchParams.get("code")!,
        new URL(bob.callbackUrl).searchParams.get("code")!,
        alice.cookie,
        alice.pendingCookie,
        bob.cookie,
        "canary-code"
      ]
      const text = lines.join("\n")
      // the capture sees the request handlers' logs (the sign-ins, bob's failed refresh)
      expect(text).toContain("alice signed in")
      expect(text).toContain("bob signed in")
      expect(text).toContain("invalid_grant")
      for (const secret of secrets) {
        expect(text).not.toContain(secret)
        for (const page of pages) expect(page.text).not.toContain(secret)
      }
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)), Logger.withMinimumLogLevel(LogLevel.All))
  })
})
