/** the contract (3): the file cache's stored format and the entry's binding to its client. */
import assert from "node:assert/strict"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Scenario } from "../scenario.js"
import { CANARY, credentials, failure, formValue, ok, redirectUri, sleep } from "../support.js"

const withDirectory = async (use: (dir: string) => Promise<void>) => {
  const dir = mkdtempSync(join(tmpdir(), "conformance-"))
  try {
    await use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const caches: ReadonlyArray<Scenario> = [
  {
    id: "file cache: the contract's JSON in a 0600 file; a second provider on the file makes no request",
    run: (driver, server) =>
      withDirectory(async (dir) => {
        const file = join(dir, "tokens.json")
        const first = ok(await driver.clientCredentials(credentials(server, { tokenCacheFile: file })))
        assert.equal(ok(await first.getAccessToken()), "token-1")
        await first.close()
        assert.equal(statSync(file).mode & 0o777, 0o600)
        const stored = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
        assert.equal(stored.access_token, "token-1")
        assert.equal(typeof stored.expires_at, "number")
        assert.equal(stored.client_id, CANARY.clientId)
        assert.equal(typeof stored.issued_at, "number")
        const second = ok(await driver.clientCredentials(credentials(server, { tokenCacheFile: file })))
        assert.equal(ok(await second.getAccessToken()), "token-1")
        assert.equal(server.tokenRequests().length, 1)
        await second.close()
      })
  },
  {
    id: "file cache in a directory others can write: ConfigurationError for client credentials too, no local fallback",
    run: (driver, server) =>
      withDirectory(async (dir) => {
        const open = join(dir, "open")
        mkdirSync(open)
        chmodSync(open, 0o777)
        const made = await driver.clientCredentials(credentials(server, { tokenCacheFile: join(open, "tokens.json") }))
        // refused when the cache is made or when it is first used, never taken for an outage
        if (made.ok) {
          failure(await made.value.getAccessToken(), "ConfigurationError")
          await made.value.close()
        } else failure(made, "ConfigurationError")
        assert.equal(server.tokenRequests().length, 0)
      })
  },
  {
    id: "file cache: an invalid file reads as none; an entry of another client is never served",
    run: (driver, server) =>
      withDirectory(async (dir) => {
        const file = join(dir, "tokens.json")
        writeFileSync(file, "{ not json", { mode: 0o600 })
        const provider = ok(await driver.clientCredentials(credentials(server, { tokenCacheFile: file })))
        assert.equal(ok(await provider.getAccessToken()), "token-1")
        await provider.close()
        const other = ok(
          await driver.clientCredentials(credentials(server, { tokenCacheFile: file, clientId: "another-client" }))
        )
        assert.equal(ok(await other.getAccessToken()), "token-2")
        await other.close()
      })
  },
  {
    id: "file cache: a rotated refresh token is stored and read back by the next provider",
    run: (driver, server) =>
      withDirectory(async (dir) => {
        const file = join(dir, "tokens.json")
        server.onToken({
          body: { access_token: "a-1", token_type: "Bearer", expires_in: 3600, refresh_token: "rotated-1" }
        })
        const first = ok(
          await driver.authorizationCode(
            credentials(server, { redirectUri, refreshToken: CANARY.refreshToken, tokenCacheFile: file })
          )
        )
        assert.equal(ok(await first.getAccessToken()), "a-1")
        await first.close()
        const stored = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
        assert.equal(stored.refresh_token, "rotated-1")
        const second = ok(await driver.authorizationCode(credentials(server, { redirectUri, tokenCacheFile: file })))
        assert.equal(ok(await second.forceRefresh("a-1")), "token-2")
        const sent = server.tokenRequests().map((request) => new URLSearchParams(request.body).get("refresh_token"))
        assert.deepEqual(sent, [CANARY.refreshToken, "rotated-1"])
        await second.close()
      })
  },
  {
    id: "shared cache: a newer refresh token restored after our invalid_grant (a failover's kept write, late) is renewed with, no AuthenticationError",
    run: (driver, server) =>
      withDirectory(async (dir) => {
        const file = join(dir, "tokens.json")
        // both access tokens long expired: the entry went back to `rotated-out` (the server rotated it to
        // `restored`), and the process that holds `restored` writes it back 0.8 s after our refresh was refused
        const entry = (refresh: string, expiresAt: number) =>
          JSON.stringify({
            access_token: `access-${refresh}`,
            token_type: "Bearer",
            refresh_token: refresh,
            expires_at: expiresAt
          })
        const past = Math.floor(Date.now() / 1000) - 600
        writeFileSync(file, entry("rotated-out", past), { mode: 0o600 })
        server.onToken(
          { status: 400, body: { error: "invalid_grant" }, onlyFor: ["refresh_token", "rotated-out"] },
          {
            body: { access_token: "renewed", token_type: "Bearer", expires_in: 3600, refresh_token: "next" },
            onlyFor: ["refresh_token", "restored"]
          }
        )
        const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri, tokenCacheFile: file })))
        const restore = (async () => {
          while (server.tokenRequests().length === 0) await sleep(10)
          await sleep(800)
          const temp = `${file}.restore`
          writeFileSync(temp, entry("restored", past + 60), { mode: 0o600 })
          renameSync(temp, file)
        })()
        const token = await provider.getAccessToken()
        await restore
        assert.equal(ok(token), "renewed")
        const sent = server.tokenRequests().map((request) => formValue(request.form, "refresh_token"))
        assert.deepEqual(sent, ["rotated-out", "restored"])
        assert.equal((JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>).refresh_token, "next")
        await provider.close()
      })
  }
]
