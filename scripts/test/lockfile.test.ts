/**
 * The lockfile a fresh clone's `npm install` leaves as it is (issue 30): every optional native package of every
 * platform recorded (linux, darwin and win32 on x64 and arm64, wherever the package builds for them), the workspace
 * manifests in step with it, and every dependency's install script approved or denied in `allowScripts` (npm 11
 * warns about the others).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishablePackages } from "../pack.mjs"

const root = join(import.meta.dirname, "..", "..")
const read = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"))

interface Entry {
  readonly version?: string
  readonly os?: ReadonlyArray<string>
  readonly cpu?: ReadonlyArray<string>
  readonly hasInstallScript?: boolean
  readonly dependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}
const lock: { readonly packages: Record<string, Entry> } = read("package-lock.json")

/** Where Node would find `name` from the package at `path` (its own node_modules, then each parent's). */
const resolve = (path: string, name: string): string | undefined => {
  let dir = path
  for (;;) {
    const candidate = `${dir === "" ? "" : `${dir}/`}node_modules/${name}`
    if (lock.packages[candidate] !== undefined) return candidate
    if (dir === "") return undefined
    const index = dir.lastIndexOf("/node_modules/")
    dir = index === -1 ? "" : dir.slice(0, index)
  }
}

describe("package-lock.json", () => {
  it("records every optional dependency, so no platform adds entries on install", () => {
    const missing = Object.entries(lock.packages).flatMap(([path, entry]) =>
      Object.keys(entry.optionalDependencies ?? {})
        .filter((name) => resolve(path, name) === undefined)
        .map((name) => `${path || "(root)"} → ${name}`)
    )
    expect(missing).toEqual([])
  })

  it("holds the native packages of linux, darwin and win32 on x64 and arm64", () => {
    const native = Object.values(lock.packages).filter((entry) => entry.os !== undefined && entry.cpu !== undefined)
    for (const os of ["linux", "darwin", "win32"]) {
      for (const cpu of ["x64", "arm64"]) {
        // esbuild, biome and rollup publish every one of these
        for (const family of ["@esbuild/", "@biomejs/cli-", "@rollup/rollup-"]) {
          const found = Object.entries(lock.packages).some(
            ([path, entry]) =>
              path.includes(`node_modules/${family}`) && entry.os?.includes(os) && entry.cpu?.includes(cpu)
          )
          expect(found, `${family}* for ${os} ${cpu}`).toBe(true)
        }
      }
    }
    expect(native.length).toBeGreaterThan(50)
  })

  it("is in step with every workspace manifest (versions and dependencies)", () => {
    const workspaces: ReadonlyArray<string> = read("package.json").workspaces
    for (const dir of ["", ...workspaces]) {
      const manifest = read(join(dir, "package.json"))
      const entry = lock.packages[dir]!
      expect(entry, dir || "(root)").toBeDefined()
      expect(entry.version, dir).toBe(manifest.version)
      for (const field of ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"] as const) {
        expect(entry[field] ?? {}, `${dir || "(root)"} ${field}`).toEqual(manifest[field] ?? {})
      }
    }
    expect(publishablePackages().length).toBeGreaterThan(0)
  })

  it("allowScripts approves or denies every dependency that has an install script", () => {
    const allowScripts: Record<string, boolean> = read("package.json").allowScripts ?? {}
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path.includes("node_modules/") && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length))
    expect(withScripts.length).toBeGreaterThan(0)
    expect([...new Set(withScripts)].filter((name) => !(name in allowScripts))).toEqual([])
  })
})
