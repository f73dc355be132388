/** The browser cache's name on the Effect 3 line: a ConfigurationError that names the packages that have it. */
import { browserTokenCache, ConfigurationError } from "@service-sdk/effect/promise"
import { describe, expect, it } from "vitest"

describe("browserTokenCache on the Effect 3 line", () => {
  it("throws a ConfigurationError naming @service-sdk/promise and the Effect 4 line, never a cache of one tab", () => {
    let thrown: unknown
    try {
      browserTokenCache({ key: "app" })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigurationError)
    expect((thrown as ConfigurationError).message).toMatch(/@service-sdk\/promise/)
    expect((thrown as ConfigurationError).message).toMatch(/2\.x/)
  })
})
