/** the contract (3 and 4): bad options, missing credentials, and secrets that never show. */
import assert from "node:assert/strict"
import type { Scenario } from "../scenario.js"
import { assertNoSecrets, CANARY, credentials, failure, ok, redirectUri } from "../support.js"

export const optionsAndSecrets: ReadonlyArray<Scenario> = [
  {
    id: "bad options are a ConfigurationError naming the option, never clamped",
    run: async (driver, server) => {
      const cases: ReadonlyArray<readonly [string, Parameters<typeof credentials>[1]]> = [
        ["timeout", { timeout: -1 }],
        ["timeout", { timeout: Number.NaN }],
        ["maxRetries", { maxRetries: 1.5 }],
        ["maxRetries", { maxRetries: -1 }],
        ["authUrl", { authUrl: "not a url" }]
      ]
      for (const [name, options] of cases) {
        const error = failure(
          await driver.clientCredentials(credentials(server, options)),
          "ConfigurationError",
          JSON.stringify(options)
        )
        assert.match(error.message, new RegExp(name), error.message)
      }
    }
  },
  {
    id: "missing credentials: a ConfigurationError that names the option and the environment variable",
    run: async (driver, server) => {
      const error = failure(await driver.clientCredentials({ authUrl: server.url }), "ConfigurationError")
      assert.match(error.message, /clientId/)
      assert.match(error.message, /SERVICE_SDK_CLIENT_ID/)
    }
  },
  {
    id: "secrets never show: a server that echoes the request back has every secret masked in the error",
    run: async (driver, server) => {
      const echo = (text: string) => ({ status: 400, body: { error: "invalid_request", error_description: text } })
      const provider = ok(
        await driver.authorizationCode(credentials(server, { redirectUri, refreshToken: CANARY.refreshToken }))
      )
      server.onToken(
        echo(`you sent ${CANARY.clientSecret} and ${CANARY.refreshToken}`),
        echo(`code ${CANARY.code} verifier ${CANARY.verifier}`)
      )
      const refresh = failure(await provider.getAccessToken(), "AuthenticationError")
      assertNoSecrets(refresh)
      const exchange = failure(await provider.exchangeCode(CANARY.code, CANARY.verifier), "AuthenticationError")
      assertNoSecrets(exchange)
      await provider.close()
    }
  },
  {
    id: "secrets never show: a transport failure does not quote the request's credentials",
    run: async (driver, server) => {
      await server.close()
      const provider = ok(await driver.clientCredentials(credentials(server, { maxRetries: 0 })))
      const error = failure(await provider.getAccessToken(), "TransportError")
      assertNoSecrets(error)
      await provider.close()
    }
  }
]
