/**
 * `AsyncAuthorizationCode#authorizeLocal` and `asyncAuthorizeLocal` on this line: the shared suite `authorizeLocal`
 * (`@service-sdk/conformance/facade`), and the one behaviour in which the lines differ.
 */
import { authorizeLocal, loopbackProvider, redirectBack } from "@service-sdk/conformance/facade"
import { describe, expect, it } from "vitest"
import { line } from "./line.js"

authorizeLocal(line)

describe("AsyncAuthorizationCode#authorizeLocal and asyncAuthorizeLocal", () => {
  // line-specific: this line ignores a callback with another state and waits for the real one (the Effect 4 line's
  // authorizeLocal ends the sign-in on it, as decision SI8 says)
  it("ignores a callback with another state (400) and times out waiting for the real one", async () => {
    const { provider } = await loopbackProvider(line)
    await using _ = provider
    let forged: Promise<{ readonly status: number } | undefined> | undefined
    await expect(
      provider.authorizeLocal({
        openBrowser: false,
        state: "expected-state",
        timeout: 1500,
        onAuthorizationUrl: (url: string) => {
          forged = redirectBack(url, { code: "c", state: "other-state" })
        }
      })
    ).rejects.toThrow(/timed out/)
    expect((await forged)?.status).toBe(400)
  })
})
