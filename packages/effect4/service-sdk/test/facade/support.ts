/**
 * What the facade tests share: each test runs without the SERVICE_SDK_* variables of the machine (and gets back
 * whatever was set before).
 */
import { afterEach, beforeEach } from "vitest"

export const isolateEnv = (
  names: ReadonlyArray<string> = [
    "SERVICE_SDK_CLIENT_ID",
    "SERVICE_SDK_CLIENT_SECRET",
    "SERVICE_SDK_REDIRECT_URI",
    "SERVICE_SDK_AUTH_URL",
    "SERVICE_SDK_API_URL"
  ]
) => {
  const saved: Record<string, string | undefined> = {}
  beforeEach(() => {
    for (const name of names) {
      saved[name] = process.env[name]
      delete process.env[name]
    }
  })
  afterEach(() => {
    for (const name of names) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  })
}
