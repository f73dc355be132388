/**
 * The conformance suite: the contract's behaviours (the contract (3, 4 and 9)) written once, as scenarios that
 * each line runs through its own driver (`test/conformance/driver.ts`, the same path in both lines) against a real
 * loopback peer ({@link startFakeServer}). `npm run test:conformance` runs both lines and compares them
 * (`scripts/conformance.mjs`). The Promise facade's test suites, written once for both lines, are the subpath
 * `@service-sdk/conformance/facade` (`./facade/index.ts`).
 */
import type { Scenario } from "./scenario.js"
import { caches } from "./scenarios/caches.js"
import { clientPolicy } from "./scenarios/clientPolicy.js"
import { optionsAndSecrets } from "./scenarios/optionsAndSecrets.js"
import { signIn } from "./scenarios/signIn.js"
import { singleFlight } from "./scenarios/singleFlight.js"
import { tokenEndpoint } from "./scenarios/tokenEndpoint.js"

export {
  barrelReachesInternal,
  type ImportEdge,
  importsOf,
  LAYERS,
  type LayerName,
  layerViolations,
  type PublicExport,
  publicExports,
  sourceFiles,
  valueImportCycles
} from "./architecture.js"
export type * from "./driver.js"
export { ALBUM_ID, type FakeServer, type RecordedRequest, type Reply, startFakeServer } from "./fakeServer.js"
export { runScenario, type Scenario } from "./scenario.js"

/** Every scenario, by topic; ids are unique. */
export const scenarios: ReadonlyArray<Scenario> = [
  ...tokenEndpoint,
  ...singleFlight,
  ...signIn,
  ...clientPolicy,
  ...optionsAndSecrets,
  ...caches
]

/** The prefix of every conformance test's name, so the summary finds them in a vitest JSON report. */
export const TEST_PREFIX = "conformance:"
