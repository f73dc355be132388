/**
 * Issue 30: the CLI as a newcomer meets it. `logout` forgets the saved login and says what it removed; `login` and
 * `whoami` name the user; one error format (`error: …` and the next step); `--log-level` and `-v` wherever they are
 * typed, with debug lines on success too, on stderr; the emulator command's banner says `npx service-sdk` unless the
 * bin is on the PATH, and logs one line per request unless `--quiet`.
 */
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { invocation } from "../src/internal/handlers.js"
import { approveFirstUrl, bin, buildBin, cleanEnv, cli, connectionArgs, freePortArg } from "./support/bin.js"

beforeAll(buildBin, 120_000)

/** Starts `service-sdk emulator …` and waits for its banner to end with `until`; its output so far, and its URL. */
const startEmulator = async (
  script: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env: Record<string, string>; readonly until: RegExp }
) => {
  const child = spawn(process.execPath, [script, "emulator", "--port", "0", ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const output = { stdout: "", stderr: "" }
  child.stdout.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString()
  })
  child.stderr.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString()
  })
  const deadline = Date.now() + 20_000
  while (!options.until.test(output.stdout)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL")
      throw new Error(`no banner:\n${output.stdout}\n${output.stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const authUrl = /running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output.stdout)![1]!
  return { child, output, authUrl }
}

describe("login, whoami, logout", () => {
  let emulator: EmulatorHandle
  beforeAll(async () => {
    emulator = await Emulator.start({ autoApprove: true })
  })
  afterAll(async () => {
    await emulator.close()
  })

  it("login names the user, logout removes the tokens and the client file and says so, whoami then says to log in", async () => {
    const cache = join(mkdtempSync(join(tmpdir(), "cli-logout-")), "tokens.json")
    const connection = connectionArgs(emulator)
    const login = await cli(["login", ...connection, "--no-browser", "--port", await freePortArg(), "--cache", cache], {
      onStdout: approveFirstUrl()
    })
    expect(login.stderr).toBe("")
    expect(login.stdout).toMatch(/^Logged in as emulator-user \(Emulator User\)/m)
    expect(existsSync(cache)).toBe(true)
    expect(existsSync(`${cache}.client.json`)).toBe(true)

    const logout = await cli(["logout", "--cache", cache])
    expect(logout.code).toBe(0)
    expect(logout.stderr).toBe("")
    expect(logout.stdout.trim()).toBe(`Logged out: removed ${cache} and ${cache}.client.json`)
    expect(existsSync(cache)).toBe(false)
    expect(existsSync(`${cache}.client.json`)).toBe(false)

    const again = await cli(["logout", "--cache", cache])
    expect(again.code).toBe(0)
    expect(again.stdout.trim()).toBe(`Not logged in: nothing saved at ${cache}`)

    const whoami = await cli(["whoami", ...connection, "--cache", cache])
    expect(whoami.code).toBe(1)
    expect(whoami.stderr).toMatch(/^error: not signed in .*run `service-sdk login` first\n$/)
  }, 60_000)
})

describe("login without a browser", () => {
  let emulator: EmulatorHandle
  beforeAll(async () => {
    emulator = await Emulator.start({ autoApprove: true })
  })
  afterAll(async () => {
    await emulator.close()
  })

  it("prints the consent page's URL once when no browser can be opened", async () => {
    const cache = join(mkdtempSync(join(tmpdir(), "cli-nobrowser-")), "tokens.json")
    const empty = mkdtempSync(join(tmpdir(), "cli-nopath-")) // no xdg-open, open or wslview here
    let visited = false
    const result = await cli(["login", ...connectionArgs(emulator), "--port", await freePortArg(), "--cache", cache], {
      env: cleanEnv({ PATH: empty, DISPLAY: "", BROWSER: "" }),
      onStdout: () => {},
      onSpawn: (child) => {
        let seen = ""
        child.stderr?.on("data", (chunk: Buffer) => {
          seen += chunk.toString()
          const url = seen.match(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/)?.[0]
          if (url !== undefined && !visited) {
            visited = true
            void fetch(url, { redirect: "follow" }).then((response) => response.text())
          }
        })
      }
    })
    expect(visited).toBe(true)
    expect(result.code, result.stderr).toBe(0)
    expect(`${result.stdout}${result.stderr}`.match(/\/authorize\?/g)).toHaveLength(1)
    expect(result.stdout).toMatch(/^Logged in as emulator-user/m)
  }, 60_000)
})

describe("--log-level and -v", () => {
  it("are accepted before or after the command, and print debug lines on success, on stderr", async () => {
    for (const args of [
      ["-v", "token", "--emulator"],
      ["token", "--emulator", "-v"],
      ["--log-level", "debug", "token", "--emulator"],
      ["token", "--emulator", "--log-level=debug"]
    ]) {
      const result = await cli(args)
      expect(result.code, args.join(" ")).toBe(0)
      expect(result.stdout, args.join(" ")).toMatch(/^access token \S+…\S+, expires in \d+ s\n$/)
      expect(result.stderr, args.join(" ")).toMatch(/^debug: token: got an access token of \d+ characters/m)
    }
    const quiet = await cli(["token", "--emulator"])
    expect(quiet.stderr).toBe("")
    // five cold starts of the bin: minutes on a loaded machine
  }, 600_000)

  it("a bad level is an error that names the flag", async () => {
    for (const args of [
      ["--log-level", "verbose", "token"],
      ["token", "--log-level", "verbose"]
    ]) {
      const result = await cli(args)
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(
        'error: --log-level must be one of debug, info, warning, error, none, not "verbose"\nRun `service-sdk token --help` to see the options.\n'
      )
    }
  })
})

describe("one error format", () => {
  it("error: … then the next step, for a bad command, a bad option and a failure", async () => {
    const unknown = await cli(["tokn"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe(
      'error: unknown command "tokn": did you mean "token"? use one of demo, token, login, whoami, logout, emulator\nRun `service-sdk --help` to see the options.\n'
    )
    const network = await cli([
      "token",
      ...connectionArgs({
        authUrl: "http://127.0.0.1:9",
        apiUrl: "http://127.0.0.1:9/v1",
        clientId: "c",
        clientSecret: "s"
      })
    ])
    expect(network.code).toBe(1)
    const [first, second, ...rest] = network.stderr.trim().split("\n")
    expect(first).toMatch(/^error: .*http:\/\/127\.0\.0\.1:9/)
    expect(second).toContain("`service-sdk emulator`")
    expect(rest).toEqual([])
  }, 60_000)
})

describe("the emulator command", () => {
  it("prints `npx service-sdk` unless this bin is on the PATH (npm's own node_modules/.bin does not count)", () => {
    const home = mkdtempSync(join(tmpdir(), "cli-path-"))
    const dir = join(home, "bin")
    mkdirSync(dir)
    symlinkSync(bin, join(dir, "service-sdk"))
    const npmBin = join(home, "node_modules", ".bin")
    mkdirSync(npmBin, { recursive: true })
    symlinkSync(bin, join(npmBin, "service-sdk"))
    expect(invocation({ PATH: `/usr/bin:${dir}` }, bin)).toBe("service-sdk")
    expect(invocation({ PATH: "/usr/bin" }, bin)).toBe("npx service-sdk")
    expect(invocation({ PATH: `${npmBin}:/usr/bin`, npm_command: "exec" }, bin)).toBe("npx service-sdk")
    expect(invocation({ PATH: `${npmBin}:/usr/bin` }, bin)).toBe("service-sdk")
  })

  it("logs one line per request on stderr, none with --quiet", async () => {
    for (const quiet of [false, true]) {
      const { authUrl, child, output } = await startEmulator(bin, quiet ? ["--quiet"] : [], {
        env: cleanEnv({ PATH: "/usr/bin:/bin" }),
        until: /npx service-sdk whoami\s*$/
      })
      try {
        expect(output.stdout).toContain(`In another terminal, in ${process.cwd()}:`)
        expect((await fetch(`${authUrl}/v1/me?x=secret-canary`)).status).toBe(401)
        await new Promise((resolve) => setTimeout(resolve, 300))
        if (quiet) expect(output.stderr).toBe("")
        else expect(output.stderr).toMatch(/^\d\d:\d\d:\d\d GET \/v1\/me 401 \d+ ms\n$/)
        expect(output.stderr).not.toContain("secret-canary")
      } finally {
        child.kill("SIGINT")
      }
    }
  }, 60_000)
})

describe("the emulator for plain code: the CLI's bin alone", () => {
  it("runs from a copy of the bin and its bundle with no node_modules anywhere, and answers plain HTTP", async () => {
    // what `npm install <cli tarball>` puts in place, minus the dependencies: the bin must need none of them
    const alone = join(mkdtempSync(join(tmpdir(), "cli-alone-")), "cli")
    for (const part of ["bin", "bundle", "package.json"]) {
      cpSync(join(bin, "..", "..", part), join(alone, part), { recursive: true })
    }
    const { authUrl, child, output } = await startEmulator(join(alone, "bin", "service-sdk.js"), ["--quiet"], {
      cwd: alone,
      env: cleanEnv({ PATH: "/usr/bin:/bin", NODE_PATH: "" }),
      until: /running at http:\/\/127\.0\.0\.1:\d+/
    })
    try {
      const token = await fetch(`${authUrl}/api/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&client_id=emulator-client&client_secret=emulator-secret"
      })
      const { access_token } = (await token.json()) as { access_token: string }
      const album = await fetch(`${authUrl}/v1/albums/6akEvsycLGftJxYudPjmqK`, {
        headers: { authorization: `Bearer ${access_token}` }
      })
      expect(album.status).toBe(200)
      expect(((await album.json()) as { id: string }).id).toBe("6akEvsycLGftJxYudPjmqK")
      expect((await fetch(`${authUrl}/__emulator/reset`, { method: "POST" })).status).toBe(200)
      expect(output.stderr).toBe("")
    } finally {
      child.kill("SIGINT")
    }
  }, 60_000)
})
