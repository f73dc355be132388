/**
 * The quick bench as a smoke test: the harness runs every part and the herd makes one token request. It asserts no
 * speed: the figures of a quick run on a shared machine mean nothing.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const main = join(root, "packages/bench/dist/main.js")

interface Report {
  readonly mode: string
  readonly parts: ReadonlyArray<{
    readonly id: number
    readonly figures: ReadonlyArray<{ readonly label: string; readonly value: number; readonly unit: string }>
  }>
  readonly targets: ReadonlyArray<{ readonly figure: string; readonly pass: boolean }>
}

describe("npm run bench -- --quick", () => {
  it("runs the Effect 3 line's thirteen parts (1-12, 16), and every herd makes exactly one token request", {
    timeout: 900_000
  }, async () => {
    // the bench runs from its build (its emulator worker is plain JS): build it as `npm run bench` does
    const build = spawnSync(join(root, "node_modules/.bin/tsc"), ["-b", "packages/bench/tsconfig.src.json"], {
      cwd: root,
      encoding: "utf8"
    })
    expect(build.stdout + build.stderr).toBe("")
    expect(build.status).toBe(0)
    // part 7 runs the CLI's bin, which is its bundle
    const bundle = spawnSync(process.execPath, [join(root, "packages/cli/scripts/bundle.mjs")], {
      cwd: root,
      encoding: "utf8"
    })
    expect(bundle.status).toBe(0)
    // part 12 packs @service-sdk/promise from its build
    const promise = spawnSync(process.execPath, [join(root, "packages/promise/scripts/build.mjs")], {
      cwd: root,
      encoding: "utf8"
    })
    expect(promise.status).toBe(0)

    const dir = mkdtempSync(join(tmpdir(), "bench-quick-"))
    try {
      const out = join(dir, "quick.json")
      // asynchronous: a synchronous wait of minutes on a loaded machine would starve vitest's worker RPC
      const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ["--expose-gc", main, "--quick", "--out", out], { cwd: root })
        // a loaded 2-core machine: minutes, not seconds
        const timer = setTimeout(() => child.kill("SIGKILL"), 880_000)
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk
        })
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk
        })
        child.on("close", (status) => {
          clearTimeout(timer)
          resolve({ status, stdout, stderr })
        })
      })
      expect(run.stderr).not.toMatch(/Error/)
      expect(run.status).toBe(0)
      for (const id of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16]) expect(run.stdout).toContain(`\n${id}. `)
      expect(run.stdout).toContain("Targets:")

      const report = JSON.parse(readFileSync(out, "utf8")) as Report
      expect(report.mode).toBe("quick")
      expect(report.parts.map((part) => part.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16])
      for (const part of report.parts) expect(part.figures.length).toBeGreaterThan(0)

      const herd = report.parts.find((part) => part.id === 3)!
      const tokenRequests = herd.figures.filter((figure) => figure.unit === "requests")
      // Effect API and Promise facade, at each herd size of the quick run
      expect(tokenRequests.length).toBeGreaterThanOrEqual(4)
      for (const figure of tokenRequests)
        expect({ figure: figure.label, requests: figure.value }).toEqual({ figure: figure.label, requests: 1 })
      // @service-sdk/promise: one package installed, and its herds (K = 1,000 and 10,000) make one token request each
      const promisePart = report.parts.find((part) => part.id === 12)!
      const counts = promisePart.figures.filter((figure) => figure.unit === "requests")
      expect(counts.map((figure) => figure.value)).toEqual([1, 1, 1])
      // issue 43's like-for-like rows: part 4 against the raw client with Effect.timeout, part 16 against its floor
      const requestRows = report.parts.find((part) => part.id === 4)!.figures
      expect(
        requestRows.filter((figure) => figure.label.includes("raw + Effect.timeout")).length
      ).toBeGreaterThanOrEqual(2)
      expect(report.targets.filter((target) => target.figure.includes("raw + Effect.timeout")).length).toBe(2)
      // many users' renewals: one token request per user, not per caller
      const renewals = report.parts.find((part) => part.id === 16)!
      expect(renewals.figures.filter((figure) => figure.unit === "requests").map((figure) => figure.value)).toEqual([
        200
      ])
      expect(renewals.figures.some((figure) => figure.label.includes("over its floor"))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
