/**
 * `AsyncAuthorizationCode#authorizeLocal` and `asyncAuthorizeLocal` on this line: the shared suite `authorizeLocal`
 * (`@service-sdk/conformance/facade`), and the one behaviour in which the lines differ.
 */
import { authorizeLocal, signInWithForgedState } from "@service-sdk/conformance/facade"
import { describe, expect, it } from "vitest"
import { line } from "./line.js"

authorizeLocal(line)

describe("AsyncAuthorizationCode#authorizeLocal and asyncAuthorizeLocal", () => {
  // line-specific: this line ignores a callback with another state and waits for the real one (the Effect 4 line's
  // authorizeLocal ends the sign-in on it, as decision SI8 says)
  it("ignores a callback with another state (400) and times out waiting for the real one", async () => {
    const { error, forgedStatus } = await signInWithForgedState(line, 1500)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/timed out/)
    expect(forgedStatus).toBe(400)
  })
})
