/**
 * The licence notices of the bundles (issue 39 item 5). Every published package that is a bundle (its build runs
 * esbuild: `@service-sdk/promise`, `@service-sdk/cli`, and the emulator once it is bundled) ships THIRD_PARTY_NOTICES
 * (scripts/notices.mjs, called by its bundle script with esbuild's metafile) in its tarball, and that file holds the
 * name, version and licence text of every package whose code esbuild put in the bundle. What went in is read here
 * from the build's own record of esbuild's inputs (`build/bundle-inputs.json`) and, for the Promise bundle, from its
 * source map, each input traced to its package by the nearest package.json with a name (not by the generator's path
 * rule); the licence files are found again here.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { embeddedPackages, noticesText, writeNotices } from "../notices.mjs"
import { publishablePackages } from "../pack.mjs"

const root = join(import.meta.dirname, "..", "..")
const effect4 = join(root, "packages", "effect4")

/** The published packages of both lines that are bundles: their package.json has esbuild among its devDependencies. */
const bundles = [
  ...publishablePackages().map((p) => join(root, p.dir)),
  ...publishablePackages(effect4).map((p) => join(effect4, p.dir))
].filter((dir) => {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  return manifest.devDependencies?.esbuild !== undefined || manifest.dependencies?.esbuild !== undefined
})

/** The npm package a file belongs to: the nearest folder above it whose package.json has a name and a version. */
const owner = (file: string): { name: string; version: string; dir: string } | undefined => {
  let dir = dirname(file)
  for (;;) {
    const manifest = join(dir, "package.json")
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, "utf8"))
      if (typeof name === "string" && typeof version === "string") return { name, version, dir }
    }
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/** Packages other than ours (every @service-sdk/* and the workspaces are covered by the package's own LICENSE). */
const thirdParty = (files: ReadonlyArray<string>) => {
  const found = new Map<string, { name: string; version: string; dir: string }>()
  for (const file of files) {
    const pkg = owner(file)
    if (pkg === undefined || !pkg.dir.split("/").includes("node_modules") || pkg.name.startsWith("@service-sdk/"))
      continue
    found.set(`${pkg.name}@${pkg.version}`, pkg)
  }
  return [...found.values()]
}

const licenceTexts = (dir: string) =>
  readdirSync(dir)
    .filter((name) => /^(licen[cs]e|copying)/i.test(name))
    .map((name) => readFileSync(join(dir, name), "utf8").trim())

const temp = mkdtempSync(join(tmpdir(), "service-sdk-notices-"))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

describe("scripts/notices.mjs", () => {
  const fixture = () => {
    const dir = mkdtempSync(join(temp, "fixture-"))
    const pkg = (name: string, files: Record<string, string>) => {
      const at = join(dir, "node_modules", ...name.split("/"))
      mkdirSync(join(at, "dist"), { recursive: true })
      writeFileSync(join(at, "package.json"), JSON.stringify({ name, version: "1.2.3", license: "MIT" }))
      writeFileSync(join(at, "dist", "index.js"), "export {}")
      for (const [file, text] of Object.entries(files)) writeFileSync(join(at, file), text)
    }
    pkg("plain", { LICENSE: "MIT License\n\nCopyright (c) 2020 Plain Person" })
    pkg("@scope/apache", { "LICENSE.txt": "Apache License 2.0 text", NOTICE: "Apache notice: Scope Inc." })
    pkg("unlicensed", { "README.md": "no licence file here" })
    mkdirSync(join(dir, "src"))
    return dir
  }

  it("lists every package of the metafile's inputs with its licence text (and NOTICE), and none of our sources", () => {
    const dir = fixture()
    const metafile = {
      inputs: {
        "node_modules/plain/dist/index.js": {},
        "node_modules/@scope/apache/dist/index.js": {},
        "src/index.ts": {},
        "lazy-builtin:crypto": {}
      }
    }
    const packages = embeddedPackages(metafile, dir)
    expect(packages.map((p) => `${p.name}@${p.version}`)).toEqual(["@scope/apache@1.2.3", "plain@1.2.3"])
    const text = noticesText(packages)
    expect(text).toContain("- plain 1.2.3 (MIT)")
    expect(text).toContain("Copyright (c) 2020 Plain Person")
    expect(text).toContain("Apache License 2.0 text")
    expect(text).toContain("Apache notice: Scope Inc.")
    expect(text).not.toContain("src/index.ts")
  })

  it("fails, naming the package, when a bundled package has no licence file", () => {
    const dir = fixture()
    const metafile = { inputs: { "node_modules/plain/dist/index.js": {}, "node_modules/unlicensed/dist/index.js": {} } }
    expect(() => writeNotices(metafile, { workingDir: dir, out: join(dir, "out", "THIRD_PARTY_NOTICES") })).toThrow(
      /no licence file found for unlicensed@1\.2\.3/
    )
    expect(existsSync(join(dir, "out", "THIRD_PARTY_NOTICES"))).toBe(false)
  })
})

describe("the bundles' THIRD_PARTY_NOTICES", () => {
  it("covers the promise package and the CLI (and every other package whose build runs esbuild)", () => {
    const names = bundles.map((dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name)
    expect(names).toEqual(expect.arrayContaining(["@service-sdk/promise", "@service-sdk/cli"]))
  })

  it.each(bundles.map((dir) => [dir.slice(root.length + 1), dir]))(
    "%s: the notices name every bundled package with its licence text, and the tarball ships them",
    (_, dir) => {
      const record = join(dir, "build", "bundle-inputs.json")
      expect(existsSync(record), `${record}: the bundle script calls writeNotices (scripts/notices.mjs)`).toBe(true)
      const { notices, inputs } = JSON.parse(readFileSync(record, "utf8")) as {
        notices: string
        inputs: ReadonlyArray<string>
      }
      const text = readFileSync(notices, "utf8")
      const bundled = thirdParty(inputs)
      expect(bundled.length).toBeGreaterThan(0)
      for (const pkg of bundled) {
        expect(text, `${pkg.name}@${pkg.version}`).toContain(`\n${pkg.name} ${pkg.version} (`)
        const licences = licenceTexts(pkg.dir)
        expect(licences.length, `${pkg.name}: a licence file`).toBeGreaterThan(0)
        for (const licence of licences) expect(text.includes(licence), `${pkg.name}'s licence text`).toBe(true)
      }
      // nothing listed that is not in the bundle
      const listed = [...text.matchAll(/^- (\S+) (\S+) \(/gm)].map((m) => `${m[1]}@${m[2]}`).sort()
      expect(listed).toEqual(bundled.map((p) => `${p.name}@${p.version}`).sort())
      // the tarball's file list (npm pack --dry-run: what `files` ships) has the notices
      const packed = JSON.parse(
        execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
          cwd: dir,
          encoding: "utf8",
          env: { ...process.env, npm_config_loglevel: "error" }
        })
      )
      const files: ReadonlyArray<string> = packed[0].files.map((f: { path: string }) => f.path)
      expect(files).toContain(notices.slice(dir.length + 1))
    }
  )

  it("@service-sdk/promise: every package in the bundle's source map is in its notices", () => {
    const dist = join(root, "packages", "promise", "dist")
    const map = JSON.parse(readFileSync(join(dist, "index.cjs.map"), "utf8")) as { sources: ReadonlyArray<string> }
    // the map names a bundled dependency's file by its package and version (`effect@4.1.0/dist/Effect.js`)
    const bundled = [
      ...new Set(
        map.sources.flatMap((source) => {
          const found = /^((?:@[^/]+\/)?[^/@]+)@([^/]+)\//.exec(source)
          return found === null ? [] : [`${found[1]} ${found[2]}`]
        })
      )
    ]
    expect(bundled.some((pkg) => pkg.startsWith("effect "))).toBe(true)
    const text = readFileSync(join(dist, "THIRD_PARTY_NOTICES"), "utf8")
    for (const pkg of bundled) expect(text, pkg).toContain(`\n${pkg} (`)
  })
})
