/**
 * The conformance scenarios (`@service-sdk/conformance`) on this line, through its driver. The Effect 3 line runs the
 * same scenarios from the same path; `npm run test:conformance` compares the two.
 */
import { type FakeServer, scenarios, startFakeServer, TEST_PREFIX } from "@service-sdk/conformance"
import { afterEach, beforeEach, describe, it } from "vitest"
import { driver } from "./driver.js"

describe(`${TEST_PREFIX} ${driver.line}`, () => {
  let server: FakeServer
  beforeEach(async () => {
    server = await startFakeServer()
  })
  afterEach(() => server.close())

  for (const scenario of scenarios) {
    it(scenario.id, () => scenario.run(driver, server), 30_000)
  }
})
