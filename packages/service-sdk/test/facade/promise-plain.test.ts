/**
 * The shared suite `promisePlain` (`@service-sdk/conformance/facade`) on this line, and a debug line that only this
 * line writes.
 */
import { promisePlain, recordingLogger } from "@service-sdk/conformance/facade"
import { AsyncAuthorizationCode } from "@service-sdk/effect/promise"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { describe, expect, it } from "vitest"
import { line } from "./line.js"

promisePlain(line)

describe("logLevel and logger", () => {
  // line-specific: only this line logs a code exchange at debug level (the Effect 4 line's exchange logs nothing)
  it("'debug' keeps the code exchange's debug line, without the code or the tokens", async () => {
    const { lines, logger } = recordingLogger()
    const httpClient = MockHttpClient.layer((_request, call) =>
      MockHttpClient.json({
        access_token: `access-${call}`,
        token_type: "Bearer",
        expires_in: 3600,
        refresh_token: `refresh-${call}`
      })
    )
    await using auth = new AsyncAuthorizationCode({
      clientId: "client-id",
      clientSecret: "client-secret",
      redirectUri: "http://127.0.0.1:8080/callback",
      httpClient,
      logger,
      logLevel: "debug"
    })
    await auth.exchangeCode("the-code")
    expect(lines).toContainEqual(["debug", expect.stringMatching(/^service-sdk DEBUG .*code exchanged/)])
    expect(lines.some(([, line]) => /the-code|access-0|refresh-0/.test(line))).toBe(false)
  })
})
