/** The facade for plain code: `logLevel` and `logger`, `fileTokenCache`, `directoryTokenStore`, bad options. */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type FacadeLine, failingWrites, isolateEnv, recordingLogger } from "./line.js"

/** The suite on one line. */
export const promisePlain = (line: FacadeLine): void => {
  const { afterEach, describe, expect, it, vi } = line.test
  const {
    AsyncAuthorizationCode,
    AsyncClientCredentials,
    AsyncServiceClient,
    AsyncUserTokens,
    ConfigurationError,
    directoryTokenStore,
    fileTokenCache,
    TokenCache,
    TokenStore
  } = line.facade
  const { MockHttpClient } = line.testing
  const { Redacted } = line.effect
  isolateEnv(line.test)

  const credentials = { clientId: "client-id", clientSecret: "client-secret" }

  /** A mock HttpClient layer that answers every token request with `access-<n>`, counting them. */
  const tokenServer = () => {
    const counter = { requests: 0 }
    const httpClient = MockHttpClient.layer((_request: unknown, call: number) => {
      counter.requests++
      return MockHttpClient.json({
        access_token: `access-${call}`,
        token_type: "Bearer",
        expires_in: 3600,
        refresh_token: `refresh-${call}`
      })
    })
    return { counter, httpClient }
  }

  const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "service-sdk-plain-"))

  afterEach(() => {
    vi.restoreAllMocks()
  })

  describe("logLevel and logger", () => {
    it("sends warnings to the given logger, and nothing to stdout", async () => {
      const stdout = vi.spyOn(process.stdout, "write")
      const { lines, logger } = recordingLogger()
      const { httpClient } = tokenServer()
      await using auth = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: failingWrites(), logger })
      expect(await auth.getAccessToken()).toBe("access-0")
      expect(lines.filter(([method]) => method === "warn").map(([, line]) => line)).toEqual([
        expect.stringMatching(/^service-sdk WARN .*the new token was not cached.*disk full/)
      ])
      expect(lines.some(([, line]) => line.includes("access-0"))).toBe(false)
      expect(stdout).not.toHaveBeenCalled()
    })

    it("by default writes warnings with console.warn (stderr), never console.log or stdout", async () => {
      const stdout = vi.spyOn(process.stdout, "write")
      const log = vi.spyOn(console, "log")
      const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined)
      const { httpClient } = tokenServer()
      await using auth = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: failingWrites() })
      await auth.getAccessToken()
      expect(warn).toHaveBeenCalledTimes(1)
      expect(String(warn.mock.calls[0]![0])).toContain("the new token was not cached")
      expect(log).not.toHaveBeenCalled()
      expect(stdout).not.toHaveBeenCalled()
    })

    it("logs nothing below logLevel: 'error' drops warnings, 'none' drops everything, 'debug' keeps debug lines", async () => {
      for (const [logLevel, expected] of [
        ["none", []],
        ["error", []],
        ["warning", ["warn"]]
      ] as const) {
        const { lines, logger } = recordingLogger()
        const { httpClient } = tokenServer()
        await using auth = new AsyncClientCredentials({
          ...credentials,
          httpClient,
          tokenCache: failingWrites(),
          logger,
          logLevel
        })
        await auth.getAccessToken()
        expect(lines.map(([method]) => method)).toEqual(expected)
      }
      const { lines, logger } = recordingLogger()
      const { httpClient } = tokenServer()
      await using auth = new AsyncClientCredentials({ ...credentials, httpClient, logger, logLevel: "debug" })
      await auth.getAccessToken()
      expect(lines).toContainEqual(["debug", expect.stringMatching(/^service-sdk DEBUG .*token refreshed/)])
      expect(lines.some(([, line]) => /client-secret|access-0|refresh-0/.test(line))).toBe(false)
    })

    it("'debug' keeps the code exchange's debug line, without the code or the tokens", async () => {
      const { lines, logger } = recordingLogger()
      const { httpClient } = tokenServer()
      await using auth = new AsyncAuthorizationCode({
        ...credentials,
        redirectUri: "http://127.0.0.1:8080/callback",
        httpClient,
        logger,
        logLevel: "debug"
      })
      await auth.exchangeCode("the-code")
      expect(lines).toContainEqual(["debug", expect.stringMatching(/^service-sdk DEBUG .*code exchanged/)])
      expect(lines.some(([, text]) => /the-code|access-0|refresh-0/.test(text))).toBe(false)
    })

    it("a bad logLevel or logger is a ConfigurationError thrown by the constructor", () => {
      expect(() => new AsyncClientCredentials({ ...credentials, logLevel: "loud" as never })).toThrow(
        ConfigurationError
      )
      expect(() => new AsyncServiceClient({ accessToken: "t", logger: {} as never })).toThrow(
        /logger must have the methods error, warn, info and debug/
      )
      expect(
        () => new AsyncUserTokens({ ...credentials, store: directoryTokenStore(temp()), logLevel: "trace" as never })
      ).toThrow(ConfigurationError)
    })
  })

  describe("fileTokenCache", () => {
    it("keeps the provider's token in a 0600 file that another provider (and TokenCache.file) reads", async () => {
      const file = path.join(temp(), "nested", "tokens.json")
      const { counter, httpClient } = tokenServer()
      {
        await using first = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: fileTokenCache(file) })
        expect(await first.getAccessToken()).toBe("access-0")
      }
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(
        TokenCache.decodeJson(fs.readFileSync(file, "utf8")).pipe((token: { readonly _tag: string }) => token._tag)
      ).toBe("Some")
      await using second = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: fileTokenCache(file) })
      expect(await second.getAccessToken()).toBe("access-0")
      expect(counter.requests).toBe(1)
    })

    // the file cache's cross-process lock (TokenCache.file's withLock) reaches the provider through fileTokenCache
    it.skipIf(!line.fileCacheHasLock)(
      "two providers on two fileTokenCache objects of one file share the file's lock: one token request",
      async () => {
        const file = path.join(temp(), "tokens.json")
        const { counter, httpClient } = tokenServer()
        await using first = new AsyncClientCredentials({
          ...credentials,
          httpClient,
          tokenCache: fileTokenCache(file)
        })
        await using second = new AsyncClientCredentials({
          ...credentials,
          httpClient,
          tokenCache: fileTokenCache(file)
        })
        const tokens = await Promise.all([first.getAccessToken(), second.getAccessToken()])
        expect(tokens).toEqual(["access-0", "access-0"])
        expect(counter.requests).toBe(1)
      }
    )

    it("has Promise get, set and clear for plain code", async () => {
      const file = path.join(temp(), "tokens.json")
      const cache = fileTokenCache(file)
      expect(await cache.get()).toBeUndefined()
      const { httpClient } = tokenServer()
      await using auth = new AsyncAuthorizationCode({
        ...credentials,
        redirectUri: "http://127.0.0.1:8080/callback",
        httpClient
      })
      const token = await auth.exchangeCode("code")
      await cache.set(token)
      expect((await cache.get())?.expiresAt).toBe(token.expiresAt)
      await cache.clear()
      expect(fs.existsSync(file)).toBe(false)
      expect(await cache.get()).toBeUndefined()
    })

    it("throws ConfigurationError for an empty or missing path", () => {
      expect(() => fileTokenCache("")).toThrow(ConfigurationError)
      expect(() => fileTokenCache(undefined as never)).toThrow(ConfigurationError)
      expect(() => directoryTokenStore(" ")).toThrow(ConfigurationError)
    })
  })

  describe("directoryTokenStore", () => {
    it("keeps each user's tokens in their own 0600 file of a 0700 directory, shared by every AsyncUserTokens on it", async () => {
      const dir = path.join(temp(), "users")
      const { httpClient } = tokenServer()
      await using auth = new AsyncAuthorizationCode({
        ...credentials,
        redirectUri: "http://127.0.0.1:8080/callback",
        httpClient
      })
      const aliceToken = await auth.exchangeCode("alice-code")
      {
        await using users = new AsyncUserTokens({ ...credentials, httpClient, store: directoryTokenStore(dir) })
        await users.signIn("alice", aliceToken)
      }
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(fs.readdirSync(dir)).toEqual([TokenStore.fileName("alice")])
      expect(fs.statSync(path.join(dir, TokenStore.fileName("alice"))).mode & 0o777).toBe(0o600)
      const store = directoryTokenStore(dir)
      await using users = new AsyncUserTokens({ ...credentials, httpClient, store })
      expect(await users.getAccessToken("alice")).toBe(Redacted.value(aliceToken.accessToken))
      expect((await store("alice").get())?.expiresAt).toBe(aliceToken.expiresAt)
      expect(await store("bob").get()).toBeUndefined()
      await users.signOut("alice")
      expect(fs.readdirSync(dir)).toEqual([])
    })
  })

  describe("bad options are ConfigurationError, thrown by the constructor", () => {
    const cases: ReadonlyArray<readonly [string, () => unknown]> = [
      ["AsyncClientCredentials(null)", () => new AsyncClientCredentials(null as never)],
      ["AsyncAuthorizationCode(null)", () => new AsyncAuthorizationCode(null as never)],
      ["AsyncServiceClient(null)", () => new AsyncServiceClient(null as never)],
      ["AsyncUserTokens(null)", () => new AsyncUserTokens(null as never)],
      ["AsyncUserTokens()", () => new (AsyncUserTokens as new () => unknown)()],
      ["AsyncClientCredentials('id')", () => new AsyncClientCredentials("id" as never)],
      ["httpClient: {}", () => new AsyncClientCredentials({ ...credentials, httpClient: {} as never })],
      ["httpClient: {} (client)", () => new AsyncServiceClient({ accessToken: "t", httpClient: {} as never })],
      [
        "httpClient: {} (authorization code)",
        () => new AsyncAuthorizationCode({ ...credentials, httpClient: {} as never })
      ],
      [
        "httpClient: {} (user tokens)",
        () => new AsyncUserTokens({ ...credentials, store: () => TokenCache.memory as never, httpClient: {} as never })
      ],
      ["store: () => null", () => new AsyncUserTokens({ ...credentials, store: () => null as never })],
      ["store: () => ({})", () => new AsyncUserTokens({ ...credentials, store: () => ({}) as never })],
      ["store: 'dir'", () => new AsyncUserTokens({ ...credentials, store: "dir" as never })],
      [
        "store throws",
        () =>
          new AsyncUserTokens({
            ...credentials,
            store: () => {
              throw new TypeError("boom")
            }
          })
      ],
      ["tokenCache: {}", () => new AsyncClientCredentials({ ...credentials, tokenCache: {} as never })],
      ["tokenCache: null (client)", () => new AsyncServiceClient({ ...credentials, tokenCache: null as never })]
    ]
    for (const [name, make] of cases) {
      it(name, () => {
        let thrown: unknown
        try {
          make()
        } catch (error) {
          thrown = error
        }
        expect(thrown).toBeInstanceOf(ConfigurationError)
      })
    }
  })
}
