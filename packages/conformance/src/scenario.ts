import type { Driver } from "./driver.js"
import { type FakeServer, startFakeServer } from "./fakeServer.js"

/** One behaviour of the contract, written once; it throws (node:assert) when the line does not behave so. */
export interface Scenario {
  /** unique: the runner's test name and the key that pairs the two lines' results */
  readonly id: string
  readonly run: (driver: Driver, server: FakeServer) => Promise<void>
}

/**
 * Runs `scenario` on `driver` against a server of its own, so that scenarios may run at once (most of their time is
 * the peer's scripted waits: Retry-After, backoff, held renewals).
 */
export const runScenario = async (scenario: Scenario, driver: Driver): Promise<void> => {
  const server = await startFakeServer()
  try {
    await scenario.run(driver, server)
  } finally {
    await server.close()
  }
}
