/**
 * The Effect 4 line as the Promise-facade suites (`@service-sdk/conformance/facade`) take it: this line's vitest,
 * facade, testing module and Effect, and what differs from the Effect 3 line (the same file, at the same path, exists
 * there).
 */
import type { FacadeLine } from "@service-sdk/conformance/facade"
import * as Facade from "@service-sdk/effect/promise"
import * as Testing from "@service-sdk/effect/testing"
import { Clock, Effect, Layer, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest"

export const line: FacadeLine = {
  name: "Effect 4",
  test: { describe, it, expect, vi, beforeAll, afterAll, beforeEach, afterEach },
  facade: Facade,
  testing: Testing,
  effect: { Clock, Effect, Redacted, Schema },
  slowLayer: (layer) =>
    Layer.unwrap(Effect.as(Effect.sleep("1 millis"), layer as ReturnType<typeof Testing.MockHttpClient.layer>)),
  // the file cache's cross-process lock (TokenCache.file's withLock) reaches the provider through fileTokenCache
  fileCacheHasLock: await Effect.runPromise(
    Effect.map(
      Effect.orDie(Facade.TokenCache.file(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "probe-")), "probe.json"))),
      (cache) => cache.withLock !== undefined
    )
  ),
  // a child process: the emulator is an Effect 3 app
  startEmulator: async () => {
    const { startEmulator } = await import("../support/emulator.js")
    const emulator = await startEmulator()
    return {
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: emulator.authUrl,
      apiUrl: emulator.apiUrl,
      clientCredentialsRequests: async () => (await emulator.stats()).tokenRequests.client_credentials ?? 0,
      close: () => emulator.stop()
    }
  },
  wording: {
    signedInPage: "Authorization complete",
    signOutWithoutClear: /cannot sign out/
  }
}
