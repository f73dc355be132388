/**
 * The layers of `docs/architecture.md` are real: a module imports only from its own layer or the ones below it
 * (protocol < ownership < client < facade), types included. Every source file has a layer. The check is the
 * conformance package's (`layerViolations`); the Effect 4 line runs it from the same path with its own files.
 */
import { type LayerName, layerViolations } from "@service-sdk/conformance"
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"

const src = join(import.meta.dirname, "..", "..", "src")

/** Where each module belongs, by path under `src/` (the first matching prefix wins). */
const RULES: ReadonlyArray<readonly [string, LayerName]> = [
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
  ["internal/safeSpans.ts", "protocol"],
  ["internal/liveServices.ts", "protocol"],
  ["internal/signIn.ts", "protocol"],
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
  ["internal/tokenCodec.ts", "ownership"],
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

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [relative(src, join(dir, entry.name))]
        : []
  )

describe("architecture: protocol < ownership < client < facade", () => {
  const { unplaced, upward } = layerViolations(src, RULES)

  it("every source file has a layer", () => {
    expect(unplaced).toEqual([])
    expect(sources(src).length).toBeGreaterThan(40)
  })

  it("no module imports from a layer above its own", () => {
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
