/** authorizeLocal (DESIGN section 3): the loopback sign-in against the emulator over real loopback HTTP. */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:net"
import { AuthorizationCode, authorizeLocal, TokenCache } from "@service-sdk/effect"
import { type RunningEmulator, startEmulator } from "../support/emulator.js"

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator?.stop()
})

const withProvider = (redirectUri: string, tokenCache?: TokenCache.TokenCache) =>
  Layer.unwrap(
    Effect.sync(() =>
      AuthorizationCode.layer({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl,
        redirectUri,
        ...(tokenCache !== undefined ? { tokenCache } : {})
      })
    )
  ).pipe(Layer.provide(FetchHttpClient.layer))

describe("authorizeLocal", () => {
  it.live("signs in through an ephemeral loopback port: consent, callback, PKCE exchange, token cached", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      let page = ""
      const token = yield* authorizeLocal({
        openBrowser: false,
        scope: "user-read-private",
        // the "browser": follows the consent page's redirect to the loopback server
        onAuthorizationUrl: (url) =>
          Effect.promise(async () => {
            assert.match(url, /redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback/)
            assert.match(url, /code_challenge_method=S256/)
            const response = await fetch(url)
            page = `${response.status} ${await response.text()}`
          })
      }).pipe(Effect.provide(withProvider("http://127.0.0.1/callback", cache)))
      assert.isDefined(token.refreshToken)
      assert.isTrue(Option.isSome(yield* cache.get))
      yield* Effect.sleep("50 millis")
      assert.match(page, /^200 .*Authorization complete/s)
    })
  )

  it.live("an error callback is an AuthenticationError and a 400 page naming it", () =>
    Effect.gen(function* () {
      let page = ""
      const error = yield* Effect.flip(
        authorizeLocal({
          openBrowser: false,
          onAuthorizationUrl: (url) =>
            Effect.promise(async () => {
              const params = new URL(url).searchParams
              const callback = new URL(params.get("redirect_uri")!)
              callback.search = new URLSearchParams({ error: "access_denied", state: params.get("state")! }).toString()
              const response = await fetch(callback)
              page = `${response.status} ${await response.text()}`
            })
        }).pipe(Effect.provide(withProvider("http://127.0.0.1/callback")))
      )
      assert.strictEqual(error._tag, "AuthenticationError")
      assert.match(error.message, /access_denied/)
      yield* Effect.sleep("50 millis")
      assert.match(page, /^400 .*access_denied/s)
    })
  )

  it.live("a localhost or https redirect URI is a ConfigurationError naming the rule", () =>
    Effect.gen(function* () {
      for (const uri of ["http://localhost:8080/cb", "https://127.0.0.1:8080/cb", "http://example.com/cb"]) {
        const error = yield* Effect.flip(
          authorizeLocal({ openBrowser: false, onAuthorizationUrl: () => {} }).pipe(Effect.provide(withProvider(uri)))
        )
        assert.strictEqual(error._tag, "ConfigurationError")
        assert.match(error.message, /loopback IP literal/)
      }
    })
  )

  it.live("a port in use is a ConfigurationError that says so", () =>
    Effect.gen(function* () {
      const blocker = createServer()
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) =>
            blocker.listen(0, "127.0.0.1", () => resolve((blocker.address() as { port: number }).port))
          )
      )
      const error = yield* Effect.flip(
        authorizeLocal({ openBrowser: false, onAuthorizationUrl: () => {} }).pipe(
          Effect.provide(withProvider(`http://127.0.0.1:${port}/cb`))
        )
      )
      blocker.close()
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.match(error.message, /in use/)
    })
  )

  it.live("no callback within the timeout is an AuthenticationError, and the server is closed", () =>
    Effect.gen(function* () {
      let callbackUrl = ""
      const error = yield* Effect.flip(
        authorizeLocal({
          openBrowser: false,
          timeout: "300 millis",
          onAuthorizationUrl: (url) => {
            callbackUrl = new URL(url).searchParams.get("redirect_uri")!
          }
        }).pipe(Effect.provide(withProvider("http://127.0.0.1/callback")))
      )
      assert.strictEqual(error._tag, "AuthenticationError")
      assert.match(error.message, /timed out/)
      const refused = yield* Effect.promise(() =>
        fetch(callbackUrl).then(
          () => false,
          () => true
        )
      )
      assert.isTrue(refused)
    })
  )
})
