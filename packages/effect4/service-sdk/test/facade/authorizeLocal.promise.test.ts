/**
 * `AsyncAuthorizationCode#authorizeLocal` and `asyncAuthorizeLocal` on this line: the shared suite `authorizeLocal`
 * (`@service-sdk/conformance/facade`), and the one behaviour in which the lines differ.
 */
import { authorizeLocal, signInWithForgedState } from "@service-sdk/conformance/facade"
import { describe, expect, it } from "vitest"
import { line } from "./line.js"

authorizeLocal(line)

describe("AsyncAuthorizationCode#authorizeLocal and asyncAuthorizeLocal", () => {
  // line-specific: this line's authorizeLocal answers the first callback, so another state ends the sign-in
  // (decision SI8); the Effect 3 line's ignores it and waits for the real one
  it("a callback with another state: 400, and AuthenticationError (state mismatch)", async () => {
    const { error, forgedStatus } = await signInWithForgedState(line, 5_000)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/state mismatch/)
    expect(forgedStatus).toBe(400)
  })
})
