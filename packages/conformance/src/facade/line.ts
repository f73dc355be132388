/**
 * What a line gives the Promise-facade suites (`./*.ts`): its own vitest's functions, its `@service-sdk/effect/promise`
 * and `@service-sdk/effect/testing` modules, the few Effect modules the tests touch, and what really differs between
 * the lines. Each line builds one {@link FacadeLine} in `test/facade/line.ts` (the same path in both lines) and each
 * `test/facade/<name>.test.ts` of both lines calls the suite of that name with it.
 */

/** A test body: vitest passes a context the suites do not use. */
type Body = () => unknown

/** `it`/`test` of either vitest (3 on the Effect 3 line, 5 on the Effect 4 line), as far as the suites call it. */
export interface TestFunction {
  (name: string, body: Body, timeout?: number): void
  readonly skipIf: (condition: unknown) => (name: string, body: Body, timeout?: number) => void
}

/**
 * The line's own vitest functions. They are passed in, not imported: the suites live in this package, and an import
 * of `vitest` from here would reach the root's vitest 3 while the Effect 4 line runs vitest 5.
 */
export interface TestFunctions {
  readonly describe: (name: string, body: () => void) => void
  readonly it: TestFunction
  /** vitest's `expect`: its matchers' types are vitest's own and differ between versions 3 and 5 */
  readonly expect: any
  /** vitest's `vi` (spies) */
  readonly vi: any
  readonly beforeAll: (body: Body, timeout?: number) => void
  readonly afterAll: (body: Body, timeout?: number) => void
  readonly beforeEach: (body: Body, timeout?: number) => void
  readonly afterEach: (body: Body, timeout?: number) => void
}

/**
 * The emulator over real loopback HTTP, as each line starts it (the Effect 3 line in process with
 * `@service-sdk/emulator`, the Effect 4 line as a child process: the emulator is an Effect 3 app).
 */
export interface EmulatorUnderTest {
  readonly clientId: string
  readonly clientSecret: string
  readonly authUrl: string
  readonly apiUrl: string
  /** the client-credentials token requests the emulator has answered so far */
  readonly clientCredentialsRequests: () => Promise<number>
  readonly close: () => Promise<void>
}

/**
 * One line under test.
 *
 * The facade, testing and Effect modules are typed `any` on purpose: both lines' facades have the same names and the
 * same plain types (checked by the compiler in `packages/effect4/service-sdk/test/publicNames/sameNames.test.ts` and
 * `packages/promise/test/types.test.ts`), but their classes and options name each line's own Effect types (a
 * `Layer` of Effect 3 or of Effect 4), so no one type here describes both. The suites are checked by running on both.
 */
export interface FacadeLine {
  /** "Effect 3" or "Effect 4" */
  readonly name: string
  readonly test: TestFunctions
  /** the line's `@service-sdk/effect/promise` */
  readonly facade: any
  /** the line's `@service-sdk/effect/testing` (`MockHttpClient`, `Fixtures`) */
  readonly testing: any
  /** the line's `effect` modules the tests use, whose calls read the same on both lines */
  readonly effect: { readonly Clock: any; readonly Effect: any; readonly Redacted: any; readonly Schema: any }
  /** an `httpClient` layer built asynchronously (after a 1 ms sleep) from `layer`: `Layer.unwrapEffect` / `Layer.unwrap` */
  readonly slowLayer: (layer: unknown) => unknown
  /** whether `TokenCache.file` has a cross-process lock (`withLock`) on this machine */
  readonly fileCacheHasLock: boolean
  /** the emulator, for the suite on the default HTTP client */
  readonly startEmulator: () => Promise<EmulatorUnderTest>
  /** the same behaviour, said in other words by each line */
  readonly wording: {
    /** in the page `authorizeLocal` answers a successful callback with */
    readonly signedInPage: string
    /** in the TokenCacheError of `signOut` over a plain store whose caches have no `clear` */
    readonly signOutWithoutClear: RegExp
  }
}

/** The environment variables the facade reads. */
export const SERVICE_SDK_VARIABLES: ReadonlyArray<string> = [
  "SERVICE_SDK_CLIENT_ID",
  "SERVICE_SDK_CLIENT_SECRET",
  "SERVICE_SDK_REDIRECT_URI",
  "SERVICE_SDK_AUTH_URL",
  "SERVICE_SDK_API_URL"
]

/**
 * Each test of the calling file runs without the `names` variables of the machine, and gets back whatever was set
 * before.
 */
export const isolateEnv = (
  test: Pick<TestFunctions, "beforeEach" | "afterEach">,
  names: ReadonlyArray<string> = SERVICE_SDK_VARIABLES
): void => {
  const saved: Record<string, string | undefined> = {}
  test.beforeEach(() => {
    for (const name of names) {
      saved[name] = process.env[name]
      delete process.env[name]
    }
  })
  test.afterEach(() => {
    for (const name of names) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  })
}

/** What `f` throws; it throws itself when `f` returns. */
export const thrownBy = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

/** A facade logger (`FacadeLogger`) that records its lines by method. */
export const recordingLogger = () => {
  const lines: Array<[method: "error" | "warn" | "info" | "debug", line: string]> = []
  const logger = {
    error: (line: string) => lines.push(["error", line]),
    warn: (line: string) => lines.push(["warn", line]),
    info: (line: string) => lines.push(["info", line]),
    debug: (line: string) => lines.push(["debug", line])
  }
  return { lines, logger }
}

/** A plain token cache whose writes fail: the provider logs a warning (and debug lines) and still serves the token. */
export const failingWrites = () => ({
  get: async () => undefined,
  set: async () => {
    throw new Error("disk full")
  }
})

/** A request the mock HTTP client (`MockHttpClient`) saw: the fields of both lines' `RecordedRequest`. */
export interface RecordedRequest {
  readonly method: string
  readonly url: URL
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
  readonly form: URLSearchParams
}

/** What a mock handler answers: a `MockResponse`, or an Effect of one (of the line's own Effect). */
export type MockAnswer = unknown

/** The SDK's errors (`ServiceError` and its subclasses), as the suites read them. */
export interface SdkError extends Error {
  readonly _tag: string
  readonly status?: number
  readonly payload?: any
  readonly retryAfter?: unknown
}

/** A mock HTTP client's handler (`MockHandler`): the request and its number (from 0). */
export type MockHandler = (request: RecordedRequest, call: number) => MockAnswer

/** The facade's `FacadeLogger`. */
export interface FacadeLogger {
  readonly error: (line: string) => void
  readonly warn: (line: string) => void
  readonly info: (line: string) => void
  readonly debug: (line: string) => void
}

/** A `TokenInfo` of either line, as the suites read it (its secrets are each line's own `Redacted`). */
export interface TokenInfoShape {
  readonly accessToken: unknown
  readonly refreshToken?: unknown
  readonly expiresAt: number
}
