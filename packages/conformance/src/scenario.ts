import type { Driver } from "./driver.js"
import type { FakeServer } from "./fakeServer.js"

/** One behaviour of the contract, written once; it throws (node:assert) when the line does not behave so. */
export interface Scenario {
  /** unique: the runner's test name and the key that pairs the two lines' results */
  readonly id: string
  readonly run: (driver: Driver, server: FakeServer) => Promise<void>
}
