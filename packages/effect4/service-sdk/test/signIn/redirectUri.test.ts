/**
 * Redirect URIs follow the Service's rules (DESIGN section 4; RFC 8252 §7.3, §8.3): `https`, or `http` on a loopback
 * IP literal; `localhost` and other plain-`http` hosts are a ConfigurationError at configuration time, naming the
 * rule and the fix, rather than a surprise on the consent page. (The Effect 3 line's test of the same name; until
 * issue 42 this line checked no redirect rule at all in `OAuthClient.make`/`AuthorizationCode.make`.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { AuthorizationCode, ConfigurationError, OAuthClient, TokenStore, UserTokens } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"

const base = { clientId: "client-id", clientSecret: "client-secret", authUrl: "http://127.0.0.1:4010" }
const mock = MockHttpClient.layer(() => ({ status: 500 }))
const noEnv = ConfigProvider.layer(ConfigProvider.fromEnvRecord({}))

/** The ConfigurationError of `OAuthClient.make` and of `AuthorizationCode.make`, or undefined for each that accepts. */
const makeBoth = (redirectUri: string) =>
  Effect.gen(function* () {
    const errorOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.match(effect, { onFailure: (error): E | undefined => error, onSuccess: () => undefined })
    return [
      yield* errorOf(OAuthClient.make({ ...base, redirectUri })),
      yield* errorOf(AuthorizationCode.make({ ...base, redirectUri }))
    ]
  }).pipe(Effect.provide(mock), Effect.provide(noEnv))

describe("redirect URIs at configuration time", () => {
  it.effect("accepted: https anywhere, http on 127.0.0.1 or [::1], with or without a port", () =>
    Effect.gen(function* () {
      for (const uri of [
        "https://app.example/callback",
        "https://127.0.0.1:8443/cb",
        "http://127.0.0.1:8080/callback",
        "http://127.0.0.1/callback",
        "http://[::1]:9000/cb",
        "http://[::1]/cb"
      ]) {
        for (const error of yield* makeBoth(uri)) assert.isUndefined(error, uri)
      }
    })
  )

  it.effect("localhost is a ConfigurationError that names the rule and the fix", () =>
    Effect.gen(function* () {
      for (const error of yield* makeBoth("http://localhost:8080/callback")) {
        assert.instanceOf(error, ConfigurationError)
        assert.include(error!.message, "localhost")
        assert.include(error!.message, "https, or http on a loopback IP literal")
        assert.include(error!.message, "use http://127.0.0.1:8080/callback")
      }
    })
  )

  it.effect("plain http on any other host is a ConfigurationError proposing https or 127.0.0.1", () =>
    Effect.gen(function* () {
      for (const uri of ["http://app.example/callback", "http://10.0.0.1:8080/cb", "http://127.0.0.2:8080/cb"]) {
        for (const error of yield* makeBoth(uri)) {
          assert.instanceOf(error, ConfigurationError, uri)
          assert.include(error!.message, "plain http")
          assert.include(error!.message, "https://")
          assert.include(error!.message, "http://127.0.0.1")
        }
      }
      for (const error of yield* makeBoth("com.example.app:/callback")) assert.include(error!.message, "must use https")
      for (const error of yield* makeBoth("ftp://127.0.0.1/cb")) assert.include(error!.message, "must use https")
      for (const error of yield* makeBoth("https://user:pw@app.example/cb")) {
        assert.include(error!.message, "no credentials or fragment")
        assert.notInclude(error!.message, "pw")
      }
      for (const error of yield* makeBoth("https://app.example/cb#top")) assert.include(error!.message, "fragment")
    })
  )

  it.effect("UserTokens checks it too", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const error = yield* Effect.flip(
        UserTokens.make({ ...base, store, redirectUri: "http://localhost:3000/callback" }).pipe(
          Effect.provide(mock),
          Effect.provide(noEnv)
        )
      )
      assert.instanceOf(error, ConfigurationError)
      assert.include(error.message, "use http://127.0.0.1:3000/callback")
    })
  )

  it.effect("the environment's SERVICE_SDK_REDIRECT_URI is checked the same way", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        AuthorizationCode.make(base).pipe(
          Effect.provide(mock),
          Effect.provide(
            ConfigProvider.layer(ConfigProvider.fromEnvRecord({ SERVICE_SDK_REDIRECT_URI: "http://localhost/cb" }))
          )
        )
      )
      assert.instanceOf(error, ConfigurationError)
      assert.include(error.message, "use http://127.0.0.1/cb")
    })
  )

  it.effect("any plain-http host but a loopback IP literal is refused; any https host is accepted", () =>
    Effect.gen(function* () {
      for (const host of [
        "a.example",
        "xn--bcher-kva.example",
        "10.1.2.3",
        "192.168.0.1",
        "[fe80::1]",
        "[::2]",
        "example"
      ]) {
        const [protocol, provider] = yield* makeBoth(`http://${host}/cb`)
        assert.instanceOf(protocol, ConfigurationError, host)
        assert.instanceOf(provider, ConfigurationError, host)
        for (const error of yield* makeBoth(`https://${host}/cb`)) assert.isUndefined(error, host)
      }
    })
  )
})
