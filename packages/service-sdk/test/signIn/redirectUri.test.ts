/**
 * Redirect URIs follow the Service's rules (DESIGN section 4; RFC 8252 §7.3, §8.3): `https`, or `http` on a loopback
 * IP literal; `localhost` and other plain-`http` hosts are a ConfigurationError at configuration time, naming the
 * rule and the fix, rather than a surprise on the consent page.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, FastCheck as fc, Layer } from "effect"
import { AuthorizationCode, ConfigurationError, OAuthClient, TokenStore, UserTokens } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"

const base = { clientId: "client-id", clientSecret: "client-secret", authUrl: "http://127.0.0.1:4010" }
const mock = MockHttpClient.layer(() => ({ status: 500 }))
const noEnv = Layer.setConfigProvider(ConfigProvider.fromMap(new Map()))

const makeBoth = (redirectUri: string) =>
  Effect.all([
    Effect.either(OAuthClient.make({ ...base, redirectUri })),
    Effect.either(AuthorizationCode.make({ ...base, redirectUri }))
  ]).pipe(Effect.scoped, Effect.provide(mock), Effect.provide(noEnv))

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
        for (const made of yield* makeBoth(uri)) expect(made._tag, uri).toBe("Right")
      }
    })
  )

  it.effect("localhost is a ConfigurationError that names the rule and the fix", () =>
    Effect.gen(function* () {
      for (const made of yield* makeBoth("http://localhost:8080/callback")) {
        expect(made._tag).toBe("Left")
        if (made._tag !== "Left") continue
        expect(made.left).toBeInstanceOf(ConfigurationError)
        expect(made.left.message).toContain("localhost")
        expect(made.left.message).toContain("https, or http on a loopback IP literal")
        expect(made.left.message).toContain("use http://127.0.0.1:8080/callback")
      }
    })
  )

  it.effect("plain http on any other host is a ConfigurationError proposing https or 127.0.0.1", () =>
    Effect.gen(function* () {
      for (const uri of ["http://app.example/callback", "http://10.0.0.1:8080/cb", "http://127.0.0.2:8080/cb"]) {
        for (const made of yield* makeBoth(uri)) {
          expect(made._tag, uri).toBe("Left")
          if (made._tag !== "Left") continue
          expect(made.left.message).toContain("plain http")
          expect(made.left.message).toContain("https://")
          expect(made.left.message).toContain("http://127.0.0.1")
        }
      }
      const custom = yield* Effect.flip(
        OAuthClient.make({ ...base, redirectUri: "com.example.app:/callback" }).pipe(Effect.provide(mock))
      )
      expect(custom.message).toContain("must use https")
    })
  )

  it.scoped("UserTokens checks it too", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const error = yield* Effect.flip(
        UserTokens.make({ ...base, store, redirectUri: "http://localhost:3000/callback" }).pipe(
          Effect.provide(mock),
          Effect.provide(noEnv)
        )
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("use http://127.0.0.1:3000/callback")
    })
  )

  it.scoped("the environment's SERVICE_SDK_REDIRECT_URI is checked the same way", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        AuthorizationCode.make(base).pipe(
          Effect.provide(mock),
          Effect.withConfigProvider(
            ConfigProvider.fromMap(new Map([["SERVICE_SDK_REDIRECT_URI", "http://localhost/cb"]]))
          )
        )
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("use http://127.0.0.1/cb")
    })
  )

  it.prop(
    "any plain-http host but a loopback IP literal is refused; any https host is accepted",
    [fc.domain(), fc.boolean()],
    ([host, https]) => {
      const [protocol, client] = Effect.runSync(makeBoth(`${https ? "https" : "http"}://${host}/cb`))
      expect(protocol!._tag).toBe(https ? "Right" : "Left")
      expect(client!._tag).toBe(https ? "Right" : "Left")
    }
  )
})
