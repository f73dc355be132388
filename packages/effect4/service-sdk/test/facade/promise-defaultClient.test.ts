/** The shared suite `defaultClient` (`@service-sdk/conformance/facade`) on this line, and what only this line has. */
import { defaultClient } from "@service-sdk/conformance/facade"
import { AsyncClientCredentials, AuthenticationError } from "@service-sdk/effect/promise"
import { describe, expect, it } from "vitest"
import { line } from "./line.js"

const emulator = defaultClient(line)

describe("Promise facade on the default client", () => {
  // line-specific: only this line's rejections carry the caller's frame (issue 42.15); the Effect 3 line's stack
  // ends in Effect's fiber runtime
  it("a rejection's stack shows the caller's own frame (42.15)", async () => {
    const wrong = new AsyncClientCredentials({
      clientId: emulator().clientId,
      clientSecret: "not-the-secret",
      authUrl: emulator().authUrl
    })
    try {
      const myOwnCallSite = () => wrong.getAccessToken()
      const error = await myOwnCallSite().catch((cause: unknown) => cause)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(String((error as Error).stack)).toContain("myOwnCallSite")
    } finally {
      await wrong.close()
    }
  })
})
