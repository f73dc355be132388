/**
 * The conformance scenarios (`@service-sdk/conformance`) on this line, through its driver. The Effect 3 line runs the
 * same scenarios from the same path; `npm run test:conformance` compares the two.
 */
import { runScenario, scenarios, TEST_PREFIX } from "@service-sdk/conformance"
import { describe, it } from "vitest"
import { driver } from "./driver.js"

// several at once (vitest's maxConcurrency), each against its own server: most of a scenario's time is waiting
describe.concurrent(`${TEST_PREFIX} ${driver.line}`, () => {
  for (const scenario of scenarios) {
    it(scenario.id, () => runScenario(scenario, driver), 30_000)
  }
})
