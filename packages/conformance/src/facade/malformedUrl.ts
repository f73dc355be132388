/**
 * A malformed URL's error says what is wrong first (issue 42 item 16): with the credentials in the environment, a bad
 * `authUrl` or `apiUrl` is that, not "no credentials: …; authUrl is not a valid URL". "no credentials" is said only
 * when credentials are what is missing.
 */
import { type FacadeLine, isolateEnv, type SdkError } from "./line.js"

/** The suite on one line. */
export const malformedUrl = (line: FacadeLine): void => {
  const { describe, expect, it } = line.test
  const { AsyncServiceClient, ConfigurationError } = line.facade
  isolateEnv(line.test)

  const thrown = (make: () => unknown): SdkError => {
    try {
      make()
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError)
      return error as SdkError
    }
    throw new Error("expected a ConfigurationError")
  }

  describe("a malformed URL says so first", () => {
    it("credentials from the environment, a malformed authUrl: the URL's problem, first", () => {
      process.env.SERVICE_SDK_CLIENT_ID = "env-id"
      process.env.SERVICE_SDK_CLIENT_SECRET = "env-secret"
      const error = thrown(() => new AsyncServiceClient({ authUrl: "http://u:secret-pw@[not a url" }))
      expect(error.message).toMatch(/^authUrl is not a valid URL/)
      expect(error.message).not.toContain("no credentials")
      expect(error.message).not.toContain("secret-pw")
      const unsupported = thrown(() => new AsyncServiceClient({ authUrl: "ftp://accounts.example" }))
      expect(unsupported.message).toMatch(/^authUrl must be an http or https URL/)
    })

    it("no credentials anywhere: says so, naming the options and the variables", () => {
      const error = thrown(() => new AsyncServiceClient({ authUrl: "https://accounts.example" }))
      expect(error.message).toMatch(/^no credentials: .*SERVICE_SDK_CLIENT_ID.*missing clientId/)
    })
  })
}
