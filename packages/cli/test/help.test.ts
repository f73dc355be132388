/**
 * Issue 22 item 4: the help reads like `gh`'s or `npm`'s — one entry per option with its default and environment
 * variable, wrapped to the terminal's width (80 when piped), none of the parser's boilerplate; bad arguments in plain
 * words. Through the built bin.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { helpRequest, wrap } from "../src/internal/help.js"
import { bin, buildBin, cleanEnv, cli, runProcess } from "./support/bin.js"

beforeAll(buildBin, 120_000)

const BOILERPLATE = [
  "A user-defined piece of text",
  "A true or false value",
  "This setting is optional",
  "An integer",
  "redacted",
  "--wizard",
  "--completions",
  "One of the following"
]

const COMMANDS = ["demo", "token", "login", "whoami", "logout", "emulator"]

describe("--help", () => {
  it("every command's help: no boilerplate, lines within 80 columns when piped, usage with the program name", async () => {
    for (const command of [[], ...COMMANDS.map((name) => [name])]) {
      for (const flag of ["--help", "-h"]) {
        const result = await cli([...command, flag])
        const what = `service-sdk ${[...command, flag].join(" ")}`
        expect(result.code, what).toBe(0)
        expect(result.stderr, what).toBe("")
        for (const sentence of BOILERPLATE) expect(result.stdout, `${what}: ${sentence}`).not.toContain(sentence)
        for (const line of result.stdout.split("\n")) expect(line.length, `${what}: ${line}`).toBeLessThanOrEqual(80)
        // the program name once in the header, never twice in a row
        expect(result.stdout, what).not.toMatch(/service-sdk\s+service-sdk/)
        expect(result.stdout, what).toMatch(
          command.length === 0
            ? /^ {2}service-sdk <command> \[options\] \[--log-level <level> \| -v\]/m
            : /^ {2}service-sdk \w+/m
        )
        if (command.length > 0) expect(result.stdout, what).toContain(`  service-sdk ${command[0]}`)
      }
    }
  }, 120_000)

  it("shows defaults and environment variables; explains --log-level", async () => {
    const login = (await cli(["login", "--help"])).stdout.replace(/\s+/g, " ")
    expect(login).toContain("--port <n>")
    expect(login).toContain("(default: a free port)")
    expect(login).toContain("(default: user-read-private user-read-email user-library-read)")
    expect(login).toContain("(default: https://accounts.service.example)")
    expect(login).toContain("[env: SERVICE_SDK_CLIENT_ID]")
    expect(login).toContain("[env: SERVICE_SDK_CLIENT_SECRET]")
    expect(login).toContain("--client-secret <secret>")
    expect(login).toContain("service-sdk emulator")
    const emulator = (await cli(["emulator", "--help"])).stdout.replace(/\s+/g, " ")
    for (const option of [
      "-p, --port <n>",
      "--auto-approve",
      "--token-lifetime <s>",
      "--rotate-refresh-tokens",
      "--token-latency-ms <ms>",
      "--client <id:secret>",
      "--require-pkce"
    ]) {
      expect(emulator).toContain(option)
    }
    expect(emulator).toContain("(default: 4000)")
    expect(emulator).toContain("(default: 3600)")
    const root = (await cli(["--help"])).stdout.replace(/\s+/g, " ")
    expect(root).toContain("--log-level <level> before or after the command")
    expect(root).toContain("-v, --verbose the same as --log-level debug")
    for (const command of COMMANDS) expect(root).toContain(` ${command} `)
    // no arguments: the same help
    expect((await cli([])).stdout.replace(/\s+/g, " ")).toBe(root)
  })

  it("wraps to the terminal's width (under script(1) with 60 columns)", async () => {
    const result = await runProcess(
      "script",
      ["-qec", `stty cols 60; '${process.execPath}' '${bin}' login --help`, "/dev/null"],
      {
        env: cleanEnv({ NO_COLOR: "1" })
      }
    )
    expect(result.code).toBe(0)
    const lines = result.stdout.split(/\r?\n/)
    expect(lines.some((line) => line.includes("--port <n>"))).toBe(true)
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60)
    expect(lines.some((line) => line.length > 50)).toBe(true)
  })

  it("a bad argument says what is wrong in plain words and where the options are", async () => {
    const port = await cli(["login", "--port", "abc"])
    expect(port.code).not.toBe(0)
    expect(port.stderr).toMatch(/^error: .*--port must be a whole number from 1 to 65535, not "abc"/)
    expect(port.stderr).not.toContain("is not a integer")
    expect(port.stderr).toContain("Run `service-sdk login --help` to see the options.")
    const lifetime = await cli(["emulator", "--token-lifetime", "-5"])
    expect(lifetime.code).not.toBe(0)
    const unknown = await cli(["token", "--nope"])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toMatch(/^error: .*--nope/)
    expect(unknown.stderr.trim().split("\n")).toHaveLength(2)
    expect(unknown.stderr).toContain("service-sdk token --help")
  })

  it("wrap and helpRequest", () => {
    expect(wrap("aa bb cc dd", 5)).toEqual(["aa bb", "cc dd"])
    expect(wrap("a-very-long-word x", 4)).toEqual(["a-very-long-word", "x"])
    expect(helpRequest([], COMMANDS)).toEqual({ command: undefined })
    expect(helpRequest(["login", "--help"], COMMANDS)).toEqual({ command: "login" })
    expect(helpRequest(["-h", "whoami"], COMMANDS)).toEqual({ command: "whoami" })
    expect(helpRequest(["nope", "--help"], COMMANDS)).toEqual({ command: undefined })
    expect(helpRequest(["login", "--port", "1"], COMMANDS)).toBeUndefined()
    expect(helpRequest(["token", "--", "--help"], COMMANDS)).toBeUndefined()
  })
})
