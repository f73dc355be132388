/**
 * The layers of `docs/architecture.md` are real on this line too: a module imports only from its own layer or the
 * ones below it (protocol < ownership < client < facade), types included; every source file has a layer. The check
 * is the conformance package's (`layerViolations`), the Effect 3 line runs it from the same path with its own files.
 */
import { type LayerName, layerViolations } from "@service-sdk/conformance"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const src = join(import.meta.dirname, "..", "..", "src")

/** Where each module belongs, by path under `src/` (the first matching prefix wins). */
const RULES: ReadonlyArray<readonly [string, LayerName]> = [
  // the protocol and what everything stands on: errors, the token model, options, redaction, retries
  ["ServiceError.ts", "protocol"],
  ["TokenInfo.ts", "protocol"],
  ["Pkce.ts", "protocol"],
  ["OAuthClient.ts", "protocol"],
  ["internal/oauthClient.ts", "protocol"],
  ["internal/tokenEndpoint.ts", "protocol"],
  ["internal/config.ts", "protocol"],
  ["internal/retry.ts", "protocol"],
  ["internal/safeSpans.ts", "protocol"],
  ["internal/liveServices.ts", "protocol"],
  ["internal/signIn.ts", "protocol"],
  ["internal/pendingSignIns.ts", "protocol"],
  // token ownership: caches, single flight, providers, sign-in
  ["TokenProvider.ts", "ownership"],
  ["TokenCache.ts", "ownership"],
  ["TokenStore.ts", "ownership"],
  ["ClientCredentials.ts", "ownership"],
  ["AuthorizationCode.ts", "ownership"],
  ["UserTokens.ts", "ownership"],
  ["BrowserSignIn.ts", "ownership"],
  ["authorizeLocal.ts", "ownership"],
  ["internal/provider.ts", "ownership"],
  ["internal/refreshGrant.ts", "ownership"],
  ["internal/singleFlight.ts", "ownership"],
  ["internal/flight/", "ownership"],
  ["internal/sharedHold.ts", "ownership"],
  ["internal/fileCache.ts", "ownership"],
  ["internal/tokenCodec.ts", "ownership"],
  ["internal/fileProgram.ts", "ownership"],
  ["internal/local/", "ownership"],
  ["internal/browser/", "ownership"],
  // the data API client
  ["ServiceClient.ts", "client"],
  ["internal/client/", "client"],
  // plain code, test helpers and the barrels
  ["promise.ts", "facade"],
  ["internal/promise/", "facade"],
  ["testing.ts", "facade"],
  ["internal/testing/", "facade"],
  ["browser.ts", "facade"],
  ["index.ts", "facade"]
]

describe("architecture: protocol < ownership < client < facade", () => {
  const { unplaced, upward } = layerViolations(src, RULES)

  it("every source file has a layer", () => {
    expect(unplaced).toEqual([])
  })

  it("no module imports from a layer above its own", () => {
    expect(upward).toEqual([])
  })
})
