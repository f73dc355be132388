/**
 * The browser path (DESIGN section 9, Browser): the package bundled for a page by esbuild (platform "browser")
 * through its `browser` conditions (the entry, and `#file-cache` in its imports) holds no Node built-in and none of the Node-only modules
 * (file caches, directory store, loopback server); the browser entry has every public name of the Node entry but
 * those a page cannot have; outside a page the browser pieces are ConfigurationErrors, never a per-tab fallback.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import { createHash, randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { BrowserSignIn, ConfigurationError, OAuthClient, TokenCache } from "@service-sdk/effect"
import * as Browser from "../../src/browser.js"
import * as Node from "../../src/index.js"
import { browserTokenCache } from "../../src/internal/promise/browserTokenCache.js"
import { base64, base64Url, sha256, utf8Bytes } from "@service-sdk/shared/bytes"
import { challengeOf } from "@service-sdk/shared/pkce"
import { bundle } from "./support/page.js"

const NODE_ONLY = /\/(fileProgram|fileEntry|fileLock|fileSafety|fileCas|loopback|authorizeLocal|TokenStore)\.(ts|js)$/
const packageDir = join(import.meta.dirname, "..", "..")

const checkBrowserPath = async (source: boolean) => {
  const { code, metafile } = await bundle(join(import.meta.dirname, "page", "everything.ts"), { source })
  const inputs = Object.keys(metafile.inputs)
  expect(inputs.filter((input) => NODE_ONLY.test(input))).toEqual([])
  // no module of the bundle imports a Node built-in, not even one a bundler would replace with an empty module
  const builtins = Object.values(metafile.inputs).flatMap((input) =>
    input.imports.filter((i) => i.original?.startsWith("node:") === true || i.path.startsWith("node:"))
  )
  expect(builtins).toEqual([])
  expect(code).not.toMatch(/\b(require\(|from )["']node:/)
  // the browser entry is the one bundled
  expect(inputs.some((input) => /service-sdk\/(src|dist)\/browser\.(ts|js)$/.test(input))).toBe(true)
  expect(inputs.some((input) => /internal\/browser\/tokenCache\.(ts|js)$/.test(input))).toBe(true)
  // the file machinery's stand-in (package.json "imports", the browser condition)
  expect(inputs.some((input) => /internal\/browser\/fileCache\.(ts|js)$/.test(input))).toBe(true)
}

describe("the browser path", () => {
  it("bundles from the sources with no Node built-in and no Node-only module", () => checkBrowserPath(true), 120_000)

  it.runIf(existsSync(join(packageDir, "dist", "browser.js")))(
    "bundles from the built package (dist, as published) the same way",
    () => checkBrowserPath(false),
    120_000
  )

  it("the browser entry has every public name of the Node entry but authorizeLocal and TokenStore", () => {
    const nodeNames = Object.keys(Node).sort()
    const browserNames = Object.keys(Browser).sort()
    expect(browserNames).toEqual(nodeNames.filter((name) => name !== "authorizeLocal" && name !== "TokenStore"))
    expect(Object.keys(Browser.TokenCache).sort()).toEqual(Object.keys(Node.TokenCache).sort())
    expect(typeof Browser.TokenCache.browser).toBe("function")
    expect(typeof Browser.BrowserSignIn.start).toBe("function")
  })
})

describe("outside a page", () => {
  it.effect("TokenCache.browser without IndexedDB (Node) is a ConfigurationError", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(TokenCache.browser())
      expect(Exit.isFailure(exit)).toBe(true)
      const error = yield* Effect.flip(TokenCache.browser())
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toMatch(/Web Locks|IndexedDB/)
    })
  )

  it.effect("TokenCache.browser without Web Locks names them; an empty key is refused", () =>
    Effect.gen(function* () {
      const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator")
      Object.defineProperty(globalThis, "navigator", { value: {}, configurable: true })
      const error = yield* Effect.flip(TokenCache.browser()).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (saved !== undefined) Object.defineProperty(globalThis, "navigator", saved)
          })
        )
      )
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toMatch(/Web Locks API \(navigator\.locks\)/)
      const empty = yield* Effect.flip(TokenCache.browser({ key: "" }))
      expect(empty.message).toMatch(/key must be a non-empty string/)
    })
  )

  it.effect("BrowserSignIn needs a page: ConfigurationError without sessionStorage", () =>
    Effect.gen(function* () {
      const oauth = OAuthClient.layer({
        clientId: "emulator-public-client",
        publicClient: true,
        redirectUri: "http://127.0.0.1:8080/callback"
      }).pipe(Layer.provide(FetchHttpClient.layer))
      const start = yield* Effect.flip(Effect.provide(BrowserSignIn.start(), oauth))
      expect(start._tag).toBe("ConfigurationError")
      expect(start.message).toMatch(/sessionStorage/)
      const complete = yield* Effect.flip(
        Effect.provide(BrowserSignIn.complete({ callbackUrl: "http://127.0.0.1:8080/callback?code=a&state=b" }), oauth)
      )
      expect(complete._tag).toBe("ConfigurationError")
      expect(BrowserSignIn.hasPending()).toBe(false)
    })
  )

  it.effect("TokenCache.file through the browser stand-in is a ConfigurationError that says why", () =>
    Effect.gen(function* () {
      const Stand = yield* Effect.promise(() => import("../../src/internal/browser/fileCache.js"))
      const error = yield* Effect.flip(Stand.checkedPath("TokenCache.file", "/tmp/x", "file"))
      expect(error.message).toMatch(/no file system in a browser page/)
    })
  )

  it("browserTokenCache (the Promise facade's) throws the ConfigurationError itself", () => {
    let thrown: unknown
    try {
      browserTokenCache()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigurationError)
    expect((thrown as ConfigurationError).message).toMatch(/IndexedDB|Web Locks/)
  })

  it("isCallback: state with a code or an error", () => {
    expect(BrowserSignIn.isCallback("https://app.example/cb?code=a&state=b")).toBe(true)
    expect(BrowserSignIn.isCallback("https://app.example/cb?error=access_denied&state=b")).toBe(true)
    expect(BrowserSignIn.isCallback("https://app.example/cb?code=a")).toBe(false)
    expect(BrowserSignIn.isCallback("https://app.example/")).toBe(false)
    expect(BrowserSignIn.isCallback("not a url")).toBe(false)
    expect(BrowserSignIn.isCallback()).toBe(false)
  })
})

describe("bytes on web globals (what replaced Buffer and node:crypto on the browser path)", () => {
  it("SHA-256, base64 and base64url agree with node:crypto and Buffer for every length up to 300 bytes", () => {
    for (let length = 0; length <= 300; length++) {
      const bytes = randomBytes(length)
      expect(Buffer.from(sha256(bytes)).toString("hex")).toBe(createHash("sha256").update(bytes).digest("hex"))
      expect(base64(bytes)).toBe(bytes.toString("base64"))
      expect(base64Url(bytes)).toBe(bytes.toString("base64url"))
    }
    expect(base64(utf8Bytes("é✓"))).toBe(Buffer.from("é✓", "utf8").toString("base64"))
  })

  it("the PKCE challenge is RFC 7636's Appendix B example", () => {
    expect(challengeOf("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )
  })
})
