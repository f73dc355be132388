/** Small helpers the scenarios share: outcomes, credentials with canary values, waits. */
import assert from "node:assert/strict"
import type { ErrorShape, Outcome, ProviderOptions } from "./driver.js"
import type { FakeServer } from "./fakeServer.js"

/** Canary values: none of them may appear in an error (the contract (4), secrets never leak). */
export const CANARY = {
  clientId: "conformance-client",
  clientSecret: "secret-canary-7f3a",
  refreshToken: "refresh-canary-91bd",
  code: "code-canary-55e2",
  verifier: "verifier-canary-0123456789abcdefghijklmnopqrstuvwxyzABCD"
} as const

export const credentials = (server: FakeServer, extra: ProviderOptions = {}): ProviderOptions => ({
  clientId: CANARY.clientId,
  clientSecret: CANARY.clientSecret,
  authUrl: server.url,
  ...extra
})

export const redirectUri = "http://127.0.0.1:8123/callback"

export const ok = <A>(outcome: Outcome<A>, what = "the call"): A => {
  if (!outcome.ok) assert.fail(`${what} failed: ${outcome.error._tag}: ${outcome.error.message}`)
  return outcome.value
}

export const failure = <A>(outcome: Outcome<A>, tag: string, what = "the call"): ErrorShape => {
  if (outcome.ok) assert.fail(`${what} succeeded; expected ${tag}`)
  assert.equal(outcome.error._tag, tag, `${what}: ${outcome.error._tag}: ${outcome.error.message}`)
  assert.equal(outcome.error.isServiceError, true, `${what}: the error is not a ServiceError`)
  return outcome.error
}

export const formValue = (form: ReadonlyArray<readonly [string, string]>, key: string): string | undefined =>
  form.find(([name]) => name === key)?.[1]

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

/** No canary value in what an error shows. */
export const assertNoSecrets = (error: ErrorShape, extra: ReadonlyArray<string> = []) => {
  const basicValue = basic(CANARY.clientId, CANARY.clientSecret).slice("Basic ".length)
  for (const secret of [CANARY.clientSecret, CANARY.refreshToken, CANARY.code, CANARY.verifier, basicValue, ...extra]) {
    assert.equal(
      error.shown.includes(secret),
      false,
      `the error shows a secret (${secret.slice(0, 6)}…): ${error.shown}`
    )
  }
}

/** ESC or RIGHT-TO-LEFT OVERRIDE: what cleaning of server-supplied text must remove. */
export const hasControlOrBidi = (text: string) => text.includes("\u001b") || text.includes("\u202e")
