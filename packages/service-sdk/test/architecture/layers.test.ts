/**
 * The layers of `docs/architecture.md` are real: a module imports only from its own layer or the ones below it
 * (protocol < ownership < client < facade), types included. Every source file has a layer.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const src = join(import.meta.dirname, "..", "..", "src")

const LAYERS = ["protocol", "ownership", "client", "facade"] as const
type Layer = (typeof LAYERS)[number]

/** Where each module belongs, by path under `src/` (the first matching prefix wins). */
const RULES: ReadonlyArray<readonly [string, Layer]> = [
  // the protocol and what everything stands on: errors, the token model, options, redaction, retries
  ["ServiceError.ts", "protocol"],
  ["TokenInfo.ts", "protocol"],
  ["Pkce.ts", "protocol"],
  ["OAuthClient.ts", "protocol"],
  ["bridge.ts", "protocol"],
  ["internal/oauthClient.ts", "protocol"],
  ["internal/tokenEndpoint.ts", "protocol"],
  ["internal/derivedToken.ts", "protocol"],
  ["internal/config.ts", "protocol"],
  ["internal/retry.ts", "protocol"],
  ["internal/redact.ts", "protocol"],
  ["internal/safeSpans.ts", "protocol"],
  ["internal/liveServices.ts", "protocol"],
  ["internal/state.ts", "protocol"],
  ["internal/signIn.ts", "protocol"],
  ["internal/redirectUriRules.ts", "protocol"],
  // token ownership: caches, single flight, providers, sign-in
  ["TokenProvider.ts", "ownership"],
  ["TokenCache.ts", "ownership"],
  ["TokenStore.ts", "ownership"],
  ["ClientCredentials.ts", "ownership"],
  ["AuthorizationCode.ts", "ownership"],
  ["UserTokens.ts", "ownership"],
  ["internal/sharedHold.ts", "ownership"],
  ["authorizeLocal.ts", "ownership"],
  ["internal/provider.ts", "ownership"],
  ["internal/refreshGrant.ts", "ownership"],
  ["internal/pendingSignIns.ts", "ownership"],
  ["internal/singleFlight.ts", "ownership"],
  ["internal/flight/", "ownership"],
  ["internal/fileCache.ts", "ownership"],
  ["internal/fileProgram.ts", "ownership"],
  ["internal/atomicWrite.ts", "ownership"],
  ["internal/local/", "ownership"],
  // the data API client
  ["ServiceClient.ts", "client"],
  ["internal/client/", "client"],
  // plain code, test helpers and the barrels
  ["promise.ts", "facade"],
  ["internal/promise/", "facade"],
  ["testing.ts", "facade"],
  ["internal/testing/", "facade"],
  ["index.ts", "facade"]
]

const layerOf = (path: string): Layer | undefined => RULES.find(([prefix]) => path.startsWith(prefix))?.[1]

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [relative(src, join(dir, entry.name))]
        : []
  )

/** The modules of `src` that `file` imports (static, dynamic and type-only imports). */
const importsOf = (file: string): ReadonlyArray<string> =>
  [...readFileSync(join(src, file), "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((match) =>
    relative(src, resolve(dirname(join(src, file)), match[1]!.replace(/\.js$/, ".ts")))
  )

describe("architecture: protocol < ownership < client < facade", () => {
  const files = sources(src)

  it("every source file has a layer", () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([])
    expect(files.length).toBeGreaterThan(40)
  })

  it("no module imports from a layer above its own", () => {
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => LAYERS.indexOf(layerOf(target)!) > LAYERS.indexOf(layerOf(file)!))
        .map((target) => `${file} (${layerOf(file)}) imports ${target} (${layerOf(target)})`)
    )
    expect(upward).toEqual([])
  })
})

const files = sources(src)

describe("architecture: the core both lines share", () => {
  const core = join(src, "..", "..", "shared", "src")
  const coreFiles = readdirSync(core).filter((file) => file.endsWith(".ts"))

  it("is plain TypeScript: it imports no Effect, no SDK package and nothing outside itself but node: built-ins", () => {
    expect(coreFiles.length).toBeGreaterThan(10)
    const outside = coreFiles.flatMap((file) =>
      [...readFileSync(join(core, file), "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)]
        .map((match) => match[1]!)
        .filter((target) => !target.startsWith("./") && !target.startsWith("node:"))
        .map((target) => `${file} imports ${target}`)
    )
    expect(outside).toEqual([])
  })

  it("is imported by name (@service-sdk/shared/<module>), never copied into a package's sources", () => {
    const copies = files.filter((file) => file.startsWith("internal/shared/"))
    expect(copies).toEqual([])
    const byName = files.filter((file) => readFileSync(join(src, file), "utf8").includes('from "@service-sdk/shared/'))
    expect(byName.length).toBeGreaterThan(5)
  })
})
