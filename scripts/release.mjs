#!/usr/bin/env node
/**
 * Versions, changelogs and publishing (issue 39 items 2 and 4). Two changesets projects, one per npm project:
 *
 * - the root (`.changeset/`): the Effect 3 line, `@service-sdk/effect` and `@service-sdk/redis` 1.x, with the bundles
 *   `@service-sdk/promise`, `@service-sdk/cli` and `@service-sdk/emulator` (one fixed version, as packages.test.ts
 *   asks);
 * - the Effect 4 line (`packages/effect4/.changeset/`): `@service-sdk/effect` and `@service-sdk/redis` 2.x.
 *
 * The nested project has the same package names as the root, so one changesets project cannot hold both lines (its
 * package list is keyed by name): each line is versioned on its own, with its own changesets and a CHANGELOG.md per
 * package. Changesets (`@changesets/cli`, installed with the Effect 4 line's toolchain: it needs Node 22) runs on the
 * Node that project installs.
 *
 *   npm run changeset                 add a changeset for the root project (Effect 3 line and the bundles)
 *   npm run changeset:effect4         add a changeset for the Effect 4 line
 *   npm run release:version           apply the changesets of both projects: versions, CHANGELOG.md files, the
 *                                     lockfiles, the CLI's VERSION
 *   npm run release:dry               what would be published, at which version and dist-tag (npm publish --dry-run
 *                                     of each tarball), and the changesets not applied yet
 *   npm run release                   publish what the registry does not have yet, then check the dist-tags
 *
 * Options: `--packed <packages.json>` publishes the tarballs of an earlier `node scripts/pack.mjs` (otherwise both
 * lines are packed into dist-packages/ first: what is tested is what ships), `--no-git-tag` (release: no
 * `<name>@<version>` git tags), and after `--`, arguments for `npm publish` (`--otp 123456`). The registry is npm's
 * configuration (`@service-sdk:registry`, the user's .npmrc, `npm_config_userconfig`).
 *
 * Dist-tags: `latest` is the Effect 4 line (2.x), `effect3` the Effect 3 line (1.x). The tag lives in each package:
 * `publishConfig.tag` ("effect3") in the 1.x manifests of `@service-sdk/effect` and `@service-sdk/redis`, so a plain
 * `npm publish` of a 1.x package cannot move `latest` back to 1.x. This script reads the tag from each tarball's
 * manifest and passes it to `npm publish --tag` too (changesets' own `changeset publish` passes `--tag latest`, which
 * would win over publishConfig: it is not used). The Effect 4 line is published first.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { effect4Dir, effect4Node } from "./effect4.mjs"
import { pack } from "./pack.mjs"

const root = join(import.meta.dirname, "..")
const changesetBin = join(effect4Dir, "node_modules", "@changesets", "cli", "bin.js")

/** The two changesets projects, in publishing order (the line that gets `latest` first). */
export const projects = [
  { id: "effect4", title: "Effect 4 line (packages/effect4)", dir: effect4Dir, tarballs: (packed) => packed.effect4 },
  { id: "root", title: "Effect 3 line and the bundles (root)", dir: root, tarballs: (packed) => packed }
]

const npm = (args, cwd = root) => {
  const result = spawnSync("npm", args, {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" }
  })
  if (result.error) throw result.error
  return result
}

/** npm's own script (npm-cli.js): the npm running this script, or the one on PATH. */
const npmCliPath = () => {
  if (process.env.npm_execpath?.endsWith(".js")) return process.env.npm_execpath
  for (const dir of (process.env.PATH ?? "").split(":")) {
    try {
      const real = realpathSync(join(dir, "npm"))
      if (real.endsWith(".js")) return real
    } catch {}
  }
  throw new Error("npm not found on PATH")
}

/** The manifest inside a tarball. */
export const tarballManifest = (tarball) => {
  const result = spawnSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`cannot read package.json of ${tarball}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** The versions of `name` on the registry npm is configured with ([] when it has no such package). */
const publishedVersions = (name) => {
  const result = npm(["view", name, "versions", "--json"])
  if (result.status === 0) {
    const parsed = result.stdout.trim() === "" ? [] : JSON.parse(result.stdout)
    return Array.isArray(parsed) ? parsed : [parsed]
  }
  const code = (() => {
    try {
      return JSON.parse(result.stdout).error?.code
    } catch {
      return undefined
    }
  })()
  if (code === "E404") return []
  throw new Error(`npm view ${name} failed: ${result.stdout}${result.stderr}`)
}

/**
 * What a release publishes: one entry per tarball, `{ project, name, version, tag, access, tarball, published }`,
 * in publishing order. Refuses a plan where a name's older major would take `latest`.
 */
export const releasePlan = (packed) => {
  const plan = projects.flatMap((project) =>
    Object.entries(project.tarballs(packed).tarballs).map(([name, tarball]) => {
      const manifest = tarballManifest(tarball)
      return {
        project: project.id,
        name,
        version: manifest.version,
        tag: manifest.publishConfig?.tag ?? "latest",
        access: manifest.publishConfig?.access ?? "public",
        tarball,
        published: false
      }
    })
  )
  const major = (version) => Number(version.split(".")[0])
  for (const entry of plan) {
    const newest = Math.max(...plan.filter((other) => other.name === entry.name).map((other) => major(other.version)))
    if (major(entry.version) < newest && entry.tag === "latest") {
      throw new Error(
        `${entry.name}@${entry.version} would be published as "latest" beside ${newest}.x: ` +
          'give its package.json a publishConfig.tag (the Effect 3 line\'s is "effect3")'
      )
    }
    if (major(entry.version) === newest && entry.tag !== "latest") {
      throw new Error(`${entry.name}@${entry.version} is the newest line but would be tagged "${entry.tag}"`)
    }
  }
  const versions = new Map()
  for (const entry of plan) {
    if (!versions.has(entry.name)) versions.set(entry.name, publishedVersions(entry.name))
    entry.published = versions.get(entry.name).includes(entry.version)
  }
  return plan
}

/** The changesets not applied yet (`changeset status`), per project: `{ project, name, type, oldVersion, newVersion }`. */
export const pendingReleases = () =>
  projects.flatMap((project) => {
    const dir = mkdtempSync(join(tmpdir(), "service-sdk-changeset-status-"))
    try {
      const output = join(dir, "status.json")
      const result = spawnSync(effect4Node, [changesetBin, "status", `--output=${output}`], {
        cwd: project.dir,
        encoding: "utf8"
      })
      // packages changed since main and no changeset at all: nothing pending (changeset status fails on that, for CI)
      if (result.status !== 0 && `${result.stdout}${result.stderr}`.includes("no changesets were found")) return []
      if (result.status !== 0)
        throw new Error(`changeset status failed in ${project.dir}: ${result.stdout}${result.stderr}`)
      const { releases } = JSON.parse(readFileSync(output, "utf8"))
      return releases
        .filter((release) => release.type !== "none" && release.oldVersion !== release.newVersion)
        .map((release) => ({ project: project.id, ...release }))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

const table = (rows) => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)))
  return rows.map((row) => `  ${row.map((cell, column) => String(cell).padEnd(widths[column])).join("  ")}`.trimEnd())
}

/** `npm publish --dry-run` of one tarball: npm's own "Publishing to … with tag … and … access" line, and its warnings. */
export const dryRun = (entry, extra = []) => {
  const result = npm(["publish", entry.tarball, "--dry-run", "--tag", entry.tag, "--access", entry.access, ...extra])
  const lines = `${result.stdout}\n${result.stderr}`.split("\n")
  return {
    ok: result.status === 0,
    publishing: lines.find((line) => line.includes("Publishing to"))?.replace(/^npm notice /, "") ?? "",
    warnings: lines.filter((line) => /^npm (warn|error)/i.test(line))
  }
}

const registryLine = () => {
  const scoped = npm(["config", "get", "@service-sdk:registry"]).stdout.trim()
  const registry = npm(["config", "get", "registry"]).stdout.trim()
  return scoped !== "" && scoped !== "undefined" ? scoped : registry
}

const packedFrom = (args) => {
  const index = args.indexOf("--packed")
  if (index >= 0) return JSON.parse(readFileSync(resolve(args[index + 1]), "utf8"))
  return pack({ log: (line) => console.error(line) })
}

const dry = (args, extra) => {
  const packed = packedFrom(args)
  const plan = releasePlan(packed)
  console.log(`release:dry: what \`npm run release\` would publish to ${registryLine()}\n`)
  let clean = true
  for (const project of projects) {
    console.log(`${project.title}:`)
    const rows = plan
      .filter((entry) => entry.project === project.id)
      .map((entry) => [
        entry.name,
        entry.version,
        `tag ${entry.tag}`,
        entry.published ? "already published (skipped)" : "publish",
        basename(entry.tarball)
      ])
    for (const line of table(rows)) console.log(line)
    console.log("")
  }
  const toPublish = plan.filter((entry) => !entry.published)
  if (toPublish.length > 0) console.log("npm publish --dry-run:")
  for (const entry of toPublish) {
    const result = dryRun(entry, extra)
    clean &&= result.ok
    console.log(`  ${entry.name}@${entry.version}: ${result.publishing || "(no publish line)"}`)
    for (const warning of result.warnings) console.log(`    ${warning}`)
  }
  if (toPublish.length === 0) console.log("nothing to publish: every version is on the registry")
  const pending = pendingReleases()
  if (pending.length > 0) {
    console.log("\nchangesets not applied yet (npm run release:version applies them, then commit):")
    for (const line of table(
      pending.map((release) => [
        release.project,
        release.name,
        `${release.oldVersion} → ${release.newVersion}`,
        release.type
      ])
    ))
      console.log(line)
  }
  return clean ? 0 : 1
}

const publish = (args, extra) => {
  const packed = packedFrom(args)
  const plan = releasePlan(packed)
  const published = []
  for (const entry of plan) {
    if (entry.published) {
      console.log(`${entry.name}@${entry.version}: already on the registry, skipped`)
      continue
    }
    const result = npm(["publish", entry.tarball, "--tag", entry.tag, "--access", entry.access, ...extra])
    if (result.status !== 0) {
      console.error(`${entry.name}@${entry.version}: npm publish failed\n${result.stdout}${result.stderr}`)
      return 1
    }
    console.log(`${entry.name}@${entry.version}: published with tag ${entry.tag}`)
    published.push(entry)
  }
  // what the registry says now: every tag points where the plan says
  for (const entry of plan) {
    const tags = JSON.parse(npm(["view", entry.name, "dist-tags", "--json"]).stdout || "{}")
    if (tags[entry.tag] !== entry.version && !entry.published) {
      console.error(`${entry.name}: dist-tag ${entry.tag} is ${tags[entry.tag]}, not ${entry.version}`)
      return 1
    }
  }
  if (!args.includes("--no-git-tag") && existsSync(join(root, ".git"))) {
    for (const entry of published) {
      const tag = `${entry.name}@${entry.version}`
      spawnSync("git", ["tag", tag], { cwd: root, stdio: "inherit" })
    }
  }
  return 0
}

/** `changeset version` in both projects, then the lockfiles and the CLI's VERSION constant follow. */
const version = () => {
  for (const project of projects) {
    // changeset version fails on a folder with no changeset: that project has nothing to version
    const folder = join(project.dir, ".changeset")
    if (!readdirSync(folder).some((file) => file.endsWith(".md") && file !== "README.md")) {
      console.log(`${project.title}: no changeset`)
      continue
    }
    const result = spawnSync(effect4Node, [changesetBin, "version"], { cwd: project.dir, stdio: "inherit" })
    if (result.status !== 0) return result.status ?? 1
  }
  // the lockfiles record the workspace packages' versions (scripts/test/lockfile.test.ts)
  // (npm on each project's Node: the Effect 4 line's engines ask for the Node it installs)
  const npmCli = npmCliPath()
  for (const [dir, node] of [
    [root, process.execPath],
    [effect4Dir, effect4Node]
  ]) {
    const args = ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"]
    const result = spawnSync(node, [npmCli, ...args], { cwd: dir, stdio: "inherit" })
    if (result.status !== 0) return result.status ?? 1
  }
  // `service-sdk --version` prints the CLI's version (a constant: the bundle reads no package.json)
  const help = join(root, "packages", "cli", "src", "internal", "help.ts")
  const cliVersion = JSON.parse(readFileSync(join(root, "packages", "cli", "package.json"), "utf8")).version
  if (existsSync(help)) {
    const text = readFileSync(help, "utf8")
    const next = text.replace(/export const VERSION = "[^"]*"/, `export const VERSION = "${cliVersion}"`)
    if (next !== text) writeFileSync(help, next)
  }
  console.log("\nversions and changelogs updated: review, commit, then npm run release:dry")
  return 0
}

const changeset = (args) => {
  const [which, ...rest] = args
  const project = projects.find((p) => p.id === which)
  if (project === undefined) {
    console.error("usage: node scripts/release.mjs changeset root|effect4 [changeset args]")
    return 2
  }
  return spawnSync(effect4Node, [changesetBin, ...rest], { cwd: project.dir, stdio: "inherit" }).status ?? 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const all = process.argv.slice(2)
  const dash = all.indexOf("--")
  const [command, ...args] = dash >= 0 ? all.slice(0, dash) : all
  const extra = dash >= 0 ? all.slice(dash + 1) : []
  const commands = {
    dry: () => dry(args, extra),
    publish: () => publish(args, extra),
    version,
    changeset: () => changeset(args)
  }
  const run = commands[command]
  if (run === undefined) {
    console.error("usage: node scripts/release.mjs dry|publish|version|changeset [options] [-- npm publish args]")
    process.exit(2)
  }
  process.exit(run())
}
