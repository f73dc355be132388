/**
 * `AsyncAuthorizationCode#authorizeLocal` and `asyncAuthorizeLocal` on this line: the shared suite `authorizeLocal`
 * (`@service-sdk/conformance/facade`), and the one behaviour in which the lines differ.
 */
import { authorizeLocal, loopbackProvider, redirectBack } from "@service-sdk/conformance/facade"
import { describe, expect, it } from "vitest"
import { line } from "./line.js"

authorizeLocal(line)

describe("AsyncAuthorizationCode#authorizeLocal and asyncAuthorizeLocal", () => {
  // line-specific: this line's authorizeLocal answers the first callback, so another state ends the sign-in
  // (decision SI8); the Effect 3 line's ignores it and waits for the real one
  it("a callback with another state: 400, and AuthenticationError (state mismatch)", async () => {
    const { provider } = await loopbackProvider(line)
    await using _ = provider
    let forged: Promise<{ readonly status: number } | undefined> | undefined
    await expect(
      provider.authorizeLocal({
        openBrowser: false,
        state: "expected-state",
        timeout: 5_000,
        onAuthorizationUrl: (url: string) => {
          forged = redirectBack(url, { code: "c", state: "other-state" })
        }
      })
    ).rejects.toThrow(/state mismatch/)
    expect((await forged)?.status).toBe(400)
  })
})
