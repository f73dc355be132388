/**
 * What a release reads (issue 39 items 2 and 4): one changesets project per npm project (the root: the Effect 3 line
 * and the bundles; packages/effect4: the Effect 4 line, same package names), each versioning exactly its publishable
 * packages as one fixed group; a CHANGELOG.md per package, shipped in its tarball; the dist-tag of each package in its
 * package.json (`publishConfig.tag: "effect3"` on the 1.x packages whose name the Effect 4 line also has, `latest`
 * for the rest); and the npm scripts that run it. The publishing itself is tested against a registry
 * (registry.test.ts).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishablePackages } from "../pack.mjs"

const root = join(import.meta.dirname, "..", "..")
const effect4 = join(root, "packages", "effect4")
const read = (path: string) => JSON.parse(readFileSync(path, "utf8"))

const lines = [
  { title: "root", project: root, packages: publishablePackages() },
  { title: "packages/effect4", project: effect4, packages: publishablePackages(effect4) }
]
const effect4Names = new Set(lines[1]!.packages.map((p) => p.name))

describe("changesets", () => {
  it.each(lines.map((line) => [line.title, line] as const))(
    "%s: one fixed group of exactly its publishable packages, public, with changelogs",
    (_, line) => {
      const config = read(join(line.project, ".changeset", "config.json"))
      expect(config.fixed).toHaveLength(1)
      expect([...config.fixed[0]].sort()).toEqual(line.packages.map((p) => p.name).sort())
      expect(config.access).toBe("public")
      expect(config.changelog).toBe("@changesets/cli/changelog")
      expect(config.privatePackages).toEqual({ version: false, tag: false })
    }
  )

  it("the two lines' configurations are two projects: the Effect 4 line's names are the root's Effect packages", () => {
    expect([...effect4Names].sort()).toEqual(["@service-sdk/effect", "@service-sdk/redis"])
    const rootNames = lines[0]!.packages.map((p) => p.name)
    for (const name of effect4Names) expect(rootNames).toContain(name)
  })
})

describe("each published package", () => {
  const all = lines.flatMap((line) => line.packages.map((p) => ({ ...p, line: line.title, project: line.project })))

  it.each(all.map((p) => [`${p.name}@${p.version}`, p] as const))(
    "%s: CHANGELOG.md names it and its version, and ships; its dist-tag is in publishConfig",
    (_, pkg) => {
      const dir = join(pkg.project, pkg.dir)
      const manifest = read(join(dir, "package.json"))
      const changelog = readFileSync(join(dir, "CHANGELOG.md"), "utf8")
      expect(changelog.split("\n")[0]).toBe(`# ${pkg.name}`)
      expect(changelog.match(/^## (.+)$/m)?.[1]).toBe(manifest.version)
      expect(manifest.files).toContain("CHANGELOG.md")
      expect(manifest.publishConfig?.access).toBe("public")
      // the older line of a name the Effect 4 line also publishes must not take `latest`
      const older = pkg.line === "root" && effect4Names.has(pkg.name)
      expect(manifest.publishConfig?.tag, pkg.name).toBe(older ? "effect3" : undefined)
      expect(manifest.version.split(".")[0]).toBe(pkg.line === "root" ? "1" : "2")
    }
  )
})

describe("npm scripts", () => {
  it("changeset, changeset:effect4, release:version, release:dry and release run scripts/release.mjs", () => {
    const { scripts } = read(join(root, "package.json"))
    expect(scripts).toMatchObject({
      changeset: "node scripts/release.mjs changeset root",
      "changeset:effect4": "node scripts/release.mjs changeset effect4",
      "release:version": "node scripts/release.mjs version",
      "release:dry": "node scripts/release.mjs dry",
      release: "node scripts/release.mjs publish"
    })
  })
})
