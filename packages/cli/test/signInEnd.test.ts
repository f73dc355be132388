/**
 * The Service's 2026 rules in the CLI: `login` without `--port` listens on a free port per sign-in (a loopback
 * redirect URI without a port), `whoami` shows when the sign-in ends, and the first refusal of the refresh token
 * names the command to run.
 */
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { approveFirstUrl, buildBin, cli, connectionArgs } from "./support/bin.js"

const SERVICE_LIFETIME = 180 * 86_400

beforeAll(buildBin, 120_000)

describe("service-sdk and the end of a sign-in", () => {
  let emulator: EmulatorHandle
  beforeAll(async () => {
    emulator = await Emulator.start({ autoApprove: true, refreshTokenLifetime: SERVICE_LIFETIME })
  })
  afterAll(async () => {
    await emulator.close()
  })

  it("login on a free port; whoami shows the end; at the end the first failure says to run login", async () => {
    const cache = join(mkdtempSync(join(tmpdir(), "service-sdk-cli-")), "tokens.json")
    const connection = connectionArgs(emulator)
    let redirect: string | undefined
    const visit = approveFirstUrl()
    const login = await cli(["login", ...connection, "--no-browser", "--cache", cache], {
      onStdout: (text) => {
        const url = text.match(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/)?.[0]
        if (url !== undefined) redirect ??= new URL(url).searchParams.get("redirect_uri") ?? undefined
        visit(text)
      }
    })
    expect(login.stderr).toBe("")
    expect(login.code).toBe(0)
    // no --port: the redirect URI got the port this sign-in listened on
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
    const saved = JSON.parse(readFileSync(cache, "utf8"))
    expect(typeof saved.signed_in_at).toBe("number")
    expect(saved.sign_in_ends_at - saved.signed_in_at).toBeCloseTo(SERVICE_LIFETIME, -1)

    const whoami = await cli(["whoami", ...connection, "--cache", cache])
    expect(whoami.stderr).toBe("")
    expect(whoami.code).toBe(0)
    expect(whoami.stdout).toContain("Logged in as emulator-user (Emulator User)")
    expect(whoami.stdout).toMatch(
      /sign-in ends \d{4}-\d{2}-\d{2}T\S+Z \(in 1(79|80) days; then run `service-sdk login` again\)/
    )

    // the Service ends the refresh token (here: a lifetime already over), and the access token has expired
    await emulator.configure({ refreshTokenLifetime: 1 })
    writeFileSync(cache, JSON.stringify({ ...JSON.parse(readFileSync(cache, "utf8")), expires_at: 0 }), { mode: 0o600 })
    const ended = await cli(["whoami", ...connection, "--cache", cache])
    expect(ended.code).not.toBe(0)
    expect(ended.stderr).toContain("sign in again: run `service-sdk login`")
    expect(ended.stderr).not.toContain(saved.refresh_token)
    const stats = await emulator.stats()
    const again = await cli(["whoami", ...connection, "--cache", cache])
    expect(again.stderr).toContain("service-sdk login")
    // the dead refresh token is not sent again
    expect((await emulator.stats()).tokenRequests.refresh_token).toBe(stats.tokenRequests.refresh_token)
  }, 60_000)
})
