/**
 * The Effect 3 line as the Promise-facade suites (`@service-sdk/conformance/facade`) take it: this line's vitest,
 * facade, testing module and Effect, and what differs from the Effect 4 line (the same file, at the same path, exists
 * there).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type { FacadeLine } from "@service-sdk/conformance/facade"
import * as Facade from "@service-sdk/effect/promise"
import * as Testing from "@service-sdk/effect/testing"
import { Clock, Effect, Layer, Redacted, Schema } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest"

export const line: FacadeLine = {
  name: "Effect 3",
  test: { describe, it, expect, vi, beforeAll, afterAll, beforeEach, afterEach },
  facade: Facade,
  testing: Testing,
  effect: { Clock, Effect, Redacted, Schema },
  slowLayer: (layer) =>
    Layer.unwrapEffect(Effect.as(Effect.sleep("1 millis"), layer as ReturnType<typeof Testing.MockHttpClient.layer>)),
  // the file cache's cross-process lock (TokenCache.file's withLock) reaches the provider through fileTokenCache
  fileCacheHasLock: Effect.runSync(
    Facade.TokenCache.file(path.join(os.tmpdir(), "probe.json")).pipe(
      Effect.map((cache) => cache.withLock !== undefined),
      Effect.provide(NodeFileSystem.layer)
    )
  ),
  // in process: the emulator is an Effect 3 app
  startEmulator: async () => {
    const { Emulator } = await import("@service-sdk/emulator")
    const emulator = await Emulator.start()
    return {
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: emulator.authUrl,
      apiUrl: emulator.apiUrl,
      clientCredentialsRequests: async () => (await emulator.stats()).tokenRequests.client_credentials,
      close: () => emulator.close()
    }
  },
  wording: {
    signedInPage: "Authorization complete",
    signOutWithoutClear: /no clear operation \(give them a clear\(\)\)/
  }
}
