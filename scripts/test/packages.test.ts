/**
 * What the tarballs say (issues 30 and 39): each package README installs the way the main README does (by name, with
 * the line's dist-tag; the packed tarball named only for a build not released yet) and links nothing that cannot be
 * checked; one version
 * story: every package of the Effect 3 line at one 1.x version, the CHANGELOG's top entry naming it, the CLI
 * printing it, and no `@since` naming a version before 1.0.0 (nothing was released before it) or after it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishablePackages } from "../pack.mjs"

const root = join(import.meta.dirname, "..", "..")
const packages = publishablePackages().map(({ dir }) => ({
  dir,
  manifest: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Record<string, any>
}))
const version: string = packages[0]!.manifest.version
/** `@service-sdk/cli` → `service-sdk-cli-1.0.0.tgz`, as `npm pack` names it */
const tarball = (name: string) => `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`

const shellLines = (markdown: string) =>
  [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((match) => match[1]!.replace(/\\\n\s*/g, " ").split("\n"))

const compare = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number))
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return x![i]! - y![i]!
  return 0
}

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })

describe("package READMEs", () => {
  it.each(packages.map((p) => [p.manifest.name, p] as const))(
    "%s installs by name, and names its tarball for unreleased builds",
    (_, pkg) => {
      const readme = readFileSync(join(root, pkg.dir, "README.md"), "utf8")
      expect(readme).toContain("npm run pack")
      expect(readme).toContain(tarball(pkg.manifest.name))
      const installs = shellLines(readme).filter((line) => /\bnpm (install|i)\b/.test(line))
      expect(installs.length).toBeGreaterThan(0)
      // the package itself is installed by name
      expect(
        installs.some((line) => line.includes(pkg.manifest.name)),
        pkg.manifest.name
      ).toBe(true)
      for (const line of installs) {
        const args = line
          .replace(/#.*$/, "")
          .split(/\s+/)
          .filter((arg) => arg !== "" && !arg.startsWith("-") && !["npm", "install", "i"].includes(arg))
        for (const arg of args) {
          // a package of this project by name (with its dist-tag or version, or none: `latest`), a tarball, or a peer
          // named with its version
          expect(arg, line).toMatch(/^@service-sdk\/[a-z-]+(@\S+)?$|\.tgz$|^(effect|@effect\/[a-z-]+|ioredis)(@\S+)?$/)
        }
      }
    }
  )

  it.each(packages.map((p) => [p.manifest.name, p] as const))("%s links nothing that cannot be checked", (_, pkg) => {
    const readme = readFileSync(join(root, pkg.dir, "README.md"), "utf8")
    const links = [...readme.matchAll(/\]\(([^)]+)\)|https?:\/\/[^\s)`"']+/g)].map((m) => m[1] ?? m[0])
    // the tarball has no repository beside it: no relative link, and no web page of ours (nothing is published)
    expect(
      links.filter((link) => !/^https?:\/\/(127\.0\.0\.1|localhost)|^https:\/\/effect\.website\/?$/.test(link))
    ).toEqual([])
  })
})

describe("one version story", () => {
  it("every package of the Effect 3 line has one 1.x version, and depends on its siblings at it", () => {
    expect(version).toMatch(/^1\.\d+\.\d+$/)
    for (const { manifest } of packages) {
      expect(manifest.version, manifest.name).toBe(version)
      for (const field of ["dependencies", "peerDependencies", "devDependencies"]) {
        for (const [name, range] of Object.entries<string>(manifest[field] ?? {})) {
          if (packages.some((p) => p.manifest.name === name))
            expect(range, `${manifest.name} ${name}`).toMatch(new RegExp(`^\\^?${version.replace(/\./g, "\\.")}$`))
        }
      }
    }
  })

  it("the CHANGELOG's top entry and the CLI name that version", () => {
    const changelog = readFileSync(join(root, "docs", "CHANGELOG.md"), "utf8")
    expect(changelog.match(/^## .*$/m)?.[0]).toContain(`(${version})`)
    const help = readFileSync(join(root, "packages", "cli", "src", "internal", "help.ts"), "utf8")
    expect(help).toContain(`export const VERSION = "${version}"`)
  })

  it("every @since names a version from 1.0.0 to the package's", () => {
    const wrong = packages.flatMap(({ dir }) =>
      sources(join(root, dir, "src")).flatMap((file) =>
        [...readFileSync(file, "utf8").matchAll(/@since (\d+\.\d+\.\d+)/g)]
          .filter((match) => compare(match[1]!, "1.0.0") < 0 || compare(match[1]!, version) > 0)
          .map((match) => `${file.slice(root.length + 1)}: @since ${match[1]}`)
      )
    )
    expect(wrong).toEqual([])
  })
})

describe("the API reference (npm run docs)", () => {
  const docs = join(root, "scripts", "docs")
  // the Effect 3 line's conversion (its entry points); the merge of both lines' conversions carries the intro page
  const config = JSON.parse(readFileSync(join(docs, "typedoc.json"), "utf8"))
  const merge = JSON.parse(readFileSync(join(docs, "typedoc.merge.json"), "utf8"))

  it("titles each page by its import name, covers every package's entry points, and opens on an introduction", () => {
    const expected = packages.flatMap(({ dir, manifest }) =>
      Object.entries<Record<string, string>>(manifest.exports)
        .filter(
          ([subpath, target]) => typeof target === "object" && target.source !== undefined && subpath !== "./bridge"
        )
        .map(([subpath, target]) => ({
          file: join(root, dir, target.source ?? ""),
          name: subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`
        }))
    )
    const entries: ReadonlyArray<string> = config.entryPoints.map((path: string) => join(docs, path))
    expect([...entries].sort()).toEqual(expected.map(({ file }) => file).sort())
    for (const { file, name } of expected) {
      expect(readFileSync(file, "utf8").match(/^ \* @module (\S+)$/m)?.[1], file).toBe(name)
    }
    expect(readFileSync(join(docs, merge.readme), "utf8")).toMatch(/^# service-sdk API reference/)
  })
})
