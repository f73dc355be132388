/**
 * Plain code's hostile input (issue 42 items 8, 9 and 17): option objects whose getters or Proxy traps throw, lists
 * too long to walk, a cache that never answers, loggers that throw, and a provider's own logger when a client runs
 * it as its `authProvider`.
 */
import {
  type FacadeLine,
  type FacadeLogger,
  failingWrites,
  isolateEnv,
  type RecordedRequest,
  thrownBy
} from "./line.js"

/** The suite on one line. */
export const promiseHostile = (line: FacadeLine): void => {
  const { describe, expect, it } = line.test
  const {
    AsyncAuthorizationCode,
    AsyncClientCredentials,
    AsyncServiceClient,
    AsyncUserTokens,
    ConfigurationError,
    TokenCacheError
  } = line.facade
  const { MockHttpClient } = line.testing
  isolateEnv(line.test)

  const credentials = { clientId: "client-id", clientSecret: "client-secret", authUrl: "http://127.0.0.1:4010" }
  const redirectUri = "http://127.0.0.1:8080/callback"

  const tokenServer = () => {
    const counter = { requests: 0 }
    const httpClient = MockHttpClient.layer((request: RecordedRequest, call: number) => {
      counter.requests++
      return request.url.pathname === "/api/token"
        ? MockHttpClient.json({ access_token: `access-${call}`, token_type: "Bearer", expires_in: 3600 })
        : MockHttpClient.json({ id: "u1", display_name: null })
    })
    return { counter, httpClient }
  }

  const huge = () => new Array(2 ** 32 - 1)

  describe("hostile option objects are ConfigurationError (42.8)", () => {
    const throwingGetter = () => ({
      ...credentials,
      get scope(): string {
        throw new TypeError("getter on fire")
      }
    })
    const throwingProxy = () =>
      new Proxy(
        {},
        {
          ownKeys() {
            throw new TypeError("trap on fire")
          }
        }
      )
    const constructors: ReadonlyArray<readonly [string, (options: never) => unknown]> = [
      ["AsyncClientCredentials", (options) => new AsyncClientCredentials(options)],
      ["AsyncAuthorizationCode", (options) => new AsyncAuthorizationCode(options)],
      ["AsyncServiceClient", (options) => new AsyncServiceClient(options)],
      ["AsyncUserTokens", (options) => new AsyncUserTokens(options)]
    ]
    for (const [name, make] of constructors) {
      it(`${name}: a throwing getter, a throwing Proxy, a list of 2^32-1 entries`, () => {
        for (const options of [throwingGetter(), throwingProxy(), { ...credentials, scope: huge() }]) {
          const error = thrownBy(() => make(options as never))
          expect(error, name).toBeInstanceOf(ConfigurationError)
        }
        const listed = thrownBy(() => make({ ...credentials, scope: huge() } as never))
        expect((listed as Error).message).toContain("scope has 4294967295 entries")
      })
    }

    it("a method's options: a list too long, a throwing getter", async () => {
      const { httpClient } = tokenServer()
      await using auth = new AsyncAuthorizationCode({ ...credentials, redirectUri, httpClient })
      expect(thrownBy(() => auth.getAuthorizationUrl({ scope: huge() }))).toBeInstanceOf(ConfigurationError)
      const hostile = {
        get state(): string {
          throw new Error("no")
        }
      }
      expect(thrownBy(() => auth.getAuthorizationUrl(hostile))).toBeInstanceOf(ConfigurationError)
      await expect(auth.beginAuthorization({ scope: huge() })).rejects.toBeInstanceOf(ConfigurationError)
    })

    it("a token cache whose get never settles: TokenCacheError within the call's timeout, and the next call works", async () => {
      const { httpClient } = tokenServer()
      let hang = true
      const cache = {
        get: () => (hang ? new Promise<undefined>(() => {}) : Promise.resolve(undefined)),
        set: async () => {}
      }
      await using auth = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: cache, timeout: 300 })
      const error = await auth.getAccessToken().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(TokenCacheError)
      expect((error as Error).message).toContain("did not settle")
      hang = false
      expect(await auth.getAccessToken()).toBe("access-0")
    })

    it("a token cache whose methods are behind a throwing getter: ConfigurationError", () => {
      const cache = {
        get get(): never {
          throw new Error("no")
        },
        set: async () => {}
      }
      expect(thrownBy(() => new AsyncClientCredentials({ ...credentials, tokenCache: cache as never }))).toBeInstanceOf(
        ConfigurationError
      )
    })
  })

  describe("a logger that throws never fails a call (42.9)", () => {
    for (const logLevel of ["none", "error", "warning", "info", "debug"] as const) {
      it(`logLevel ${logLevel}: the call resolves; each line is tried once`, async () => {
        const calls: Array<string> = []
        const boom = (method: string) => (line: string) => {
          calls.push(`${method}: ${line}`)
          throw new Error("EPIPE: broken pipe, write")
        }
        const logger: FacadeLogger = {
          error: boom("error"),
          warn: boom("warn"),
          info: boom("info"),
          debug: boom("debug")
        }
        const { httpClient } = tokenServer()
        await using auth = new AsyncClientCredentials({
          ...credentials,
          httpClient,
          tokenCache: failingWrites(),
          logger,
          logLevel
        })
        expect(await auth.getAccessToken()).toBe("access-0")
        if (logLevel === "warning" || logLevel === "info" || logLevel === "debug") {
          expect(calls.filter((call) => call.startsWith("warn: ")).length).toBe(1)
        } else {
          expect(calls.filter((call) => call.startsWith("warn: "))).toEqual([])
        }
        if (logLevel === "debug") expect(calls.some((call) => call.startsWith("debug: "))).toBe(true)
      })
    }

    it("a logger whose methods return rejected Promises: no unhandled rejection, the call resolves", async () => {
      const rejected: Array<unknown> = []
      const onRejection = (reason: unknown) => rejected.push(reason)
      process.on("unhandledRejection", onRejection)
      try {
        const reject = async () => {
          throw new Error("async logger on fire")
        }
        const { httpClient } = tokenServer()
        await using auth = new AsyncClientCredentials({
          ...credentials,
          httpClient,
          tokenCache: failingWrites(),
          logger: { error: reject, warn: reject, info: reject, debug: reject },
          logLevel: "debug"
        })
        expect(await auth.getAccessToken()).toBe("access-0")
        await new Promise((resolve) => setTimeout(resolve, 50))
        expect(rejected).toEqual([])
      } finally {
        process.off("unhandledRejection", onRejection)
      }
    })
  })

  describe("a provider passed as authProvider logs to its own logger (42.17)", () => {
    it("at debug: the provider's lines reach the provider's logger, not the client's", async () => {
      const lines = { provider: [] as Array<string>, client: [] as Array<string> }
      const recorder = (into: Array<string>): FacadeLogger => ({
        error: (line) => into.push(line),
        warn: (line) => into.push(line),
        info: (line) => into.push(line),
        debug: (line) => into.push(line)
      })
      const { httpClient } = tokenServer()
      await using provider = new AsyncClientCredentials({
        ...credentials,
        httpClient,
        logger: recorder(lines.provider),
        logLevel: "debug"
      })
      await using client = new AsyncServiceClient({
        authProvider: provider,
        apiUrl: "http://127.0.0.1:4020/v1",
        httpClient,
        logger: recorder(lines.client),
        logLevel: "none"
      })
      await client.users.me()
      expect(lines.provider.some((line) => /^service-sdk DEBUG .*token refreshed/.test(line))).toBe(true)
      expect(lines.client).toEqual([])
    })
  })
}
