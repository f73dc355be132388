#!/usr/bin/env node
/**
 * `npm run pack`: build the repository and pack every publishable workspace package (each workspace whose
 * package.json is not `"private": true`, found from the root's `workspaces`, so a new package is picked up without an
 * edit here) into one folder, `dist-packages/` by default (gitignored), then print the `npm install` lines that
 * install them into another project. The consumer tests (scripts/test/consumer*.test.ts) install what this prints.
 *
 *   node scripts/pack.mjs [--out <dir>] [--json]
 *
 * `--json` prints `{ "tarballs": { "<npm name>": "<absolute path>" }, "install": "<npm install line>", "peers": {...},
 * "effect4": { the same for the Effect 4 line } }` instead of the text. The folder also gets `packages.json` with the
 * same content.
 *
 * Both lines are packed: the Effect 3 line (1.x, the root's workspaces) into the folder, and the Effect 4 line (2.x,
 * the publishable workspaces of the nested project `packages/effect4`) into its `effect4/` subfolder (same npm names,
 * other versions: one folder each, so that an install line never mixes the lines).
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(import.meta.dirname, "..")
const effect4Root = join(root, "packages", "effect4")

/** The workspace folders of a project's package.json (the root's by default), `dir/*` patterns expanded. */
const workspaceDirs = (project = root) => {
  const { workspaces = [] } = JSON.parse(readFileSync(join(project, "package.json"), "utf8"))
  const patterns = Array.isArray(workspaces) ? workspaces : (workspaces.packages ?? [])
  return patterns.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [pattern]
    const parent = pattern.slice(0, -2)
    return readdirSync(join(project, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`)
  })
}

/**
 * The publishable workspace packages: `{ dir, name, version, peerDependencies }`, dependencies first (a package
 * that depends on another of ours comes after it), so the printed install line reads from the core outwards.
 */
export const publishablePackages = (project = root) => {
  const found = workspaceDirs(project)
    .filter((dir) => existsSync(join(project, dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(project, dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => manifest.private !== true)
  const names = new Set(found.map(({ manifest }) => manifest.name))
  const internalDeps = ({ manifest }) =>
    Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((name) => names.has(name))
  const ordered = []
  const placed = new Set()
  while (ordered.length < found.length) {
    const next =
      found.find((pkg) => !placed.has(pkg.manifest.name) && internalDeps(pkg).every((dep) => placed.has(dep))) ??
      found.find((pkg) => !placed.has(pkg.manifest.name))
    placed.add(next.manifest.name)
    ordered.push(next)
  }
  return ordered.map(({ dir, manifest }) => ({
    dir,
    name: manifest.name,
    version: manifest.version,
    peerDependencies: manifest.peerDependencies ?? {}
  }))
}

/**
 * Builds (`tsc -b`), packs every publishable package into `out` (emptied of old tarballs first) and returns the
 * tarball of each package, the peers a user installs beside them, and the install line.
 */
/** `npm pack` of the publishable workspaces of `project` into `dest` (emptied of old tarballs first). */
const packProject = (project, dest) => {
  mkdirSync(dest, { recursive: true })
  for (const file of readdirSync(dest)) if (file.endsWith(".tgz")) rmSync(join(dest, file))
  const packages = publishablePackages(project)
  const packed = JSON.parse(
    execFileSync(
      "npm",
      ["pack", "--json", "--pack-destination", dest, ...packages.map((p) => `--workspace=${p.dir}`)],
      // prepack scripts (the CLI's bundle) print to stdout too: keep only npm's JSON, from the first "[" line
      { cwd: project, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 }
    ).replace(/^[\s\S]*?^\[/m, "[")
  )
  const tarballs = {}
  for (const { name, filename } of packed) {
    // npm names a scoped package's tarball "scope-name-version.tgz"; its JSON may still say "@scope/name-version.tgz"
    const file = join(dest, filename.replace(/^@/, "").replace("/", "-"))
    if (!existsSync(file)) throw new Error(`npm pack reported ${filename} but ${file} does not exist`)
    tarballs[name] = file
  }
  for (const { name } of packages) if (tarballs[name] === undefined) throw new Error(`npm pack did not pack ${name}`)
  const ours = new Set(packages.map((p) => p.name))
  const peers = {}
  for (const p of packages) {
    for (const [name, range] of Object.entries(p.peerDependencies)) if (!ours.has(name)) peers[name] ??= range
  }
  const ordered = Object.fromEntries(packages.map((p) => [p.name, tarballs[p.name]]))
  return { tarballs: ordered, peers, install: `npm install ${Object.values(ordered).join(" ")}` }
}

/**
 * Builds (`tsc -b`: both lines), packs every publishable package of both lines into `out` (the Effect 4 line into
 * `out/effect4`) and returns, for each line, the tarball of each package, the peers a user installs beside them,
 * and the install line.
 */
export const pack = ({ out = join(root, "dist-packages"), log = () => {} } = {}) => {
  const dest = resolve(out)
  log(
    `building (tsc -b) and packing ${publishablePackages()
      .map((p) => p.name)
      .join(", ")} into ${dest}, and the ` +
      `Effect 4 line (${publishablePackages(effect4Root)
        .map((p) => p.name)
        .join(", ")}) into ${join(dest, "effect4")}`
  )
  // stdout is for the result (--json): anything tsc says goes to stderr
  execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b"], { cwd: root, stdio: ["ignore", 2, 2] })
  const result = { ...packProject(root, dest), effect4: packProject(effect4Root, join(dest, "effect4")) }
  writeFileSync(join(dest, "packages.json"), `${JSON.stringify(result, null, 2)}\n`)
  return result
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const outIndex = args.indexOf("--out")
  const json = args.includes("--json")
  const result = pack({
    ...(outIndex >= 0 ? { out: args[outIndex + 1] } : {}),
    log: (line) => console.error(line)
  })
  if (json) {
    console.log(JSON.stringify(result, null, 2))
  } else {
    const effectPeers = Object.entries(result.peers)
      .filter(([name]) => name === "effect" || name.startsWith("@effect/"))
      .sort(([a], [b]) => (a === "effect" ? -1 : b === "effect" ? 1 : a.localeCompare(b)))
      .map(([name, range]) => `${name}@${pinnedRange(name, range)}`)
    const otherPeers = Object.entries(result.peers).filter(
      ([name]) => !(name === "effect" || name.startsWith("@effect/"))
    )
    console.log("\nPacked:")
    for (const [name, file] of Object.entries(result.tarballs)) console.log(`  ${name.padEnd(24)} ${file}`)
    console.log("\nIn your project (Effect 3.22.x and its platform packages are peers; name the versions):")
    console.log(`  npm install ${effectPeers.join(" ")}`)
    console.log(`  ${result.install}`)
    if (otherPeers.length > 0) {
      console.log(
        `\nOther peers (only for the package that needs them): ${otherPeers.map(([n, r]) => `${n}@"${r}"`).join(" ")}`
      )
    }
    const alone = ["@service-sdk/promise", "@service-sdk/emulator", "@service-sdk/cli"].filter(
      (name) => result.tarballs[name] !== undefined
    )
    if (alone.length > 0) {
      console.log(
        "\nThese need no other tarball (bundles with no dependency and no peer, beside either Effect or none):"
      )
      for (const name of alone) console.log(`  npm install ${result.tarballs[name]}`)
    }
    console.log("\nInstall the tarballs together: an unreleased build's packages are not on the registry yet.")
    console.log("\nThe Effect 4 line (2.x; see docs/effect4.md):")
    for (const [name, file] of Object.entries(result.effect4.tarballs)) console.log(`  ${name.padEnd(24)} ${file}`)
    console.log(
      "\nIn your Effect 4 project (effect is the only peer; bring an HttpClient layer, e.g. FetchHttpClient):"
    )
    console.log(`  npm install effect@${effect4Pinned()}`)
    console.log(`  ${result.effect4.install}`)
    const effect4Others = Object.entries(result.effect4.peers).filter(
      ([name]) => name !== "effect" && !name.startsWith("@service-sdk/")
    )
    if (effect4Others.length > 0) {
      console.log(`  (for @service-sdk/redis: ${effect4Others.map(([n, r]) => `${n}@"${r}"`).join(" ")})`)
    }
    const tools = ["@service-sdk/emulator", "@service-sdk/cli"].filter((name) => result.tarballs[name] !== undefined)
    if (tools.length > 0) {
      console.log("  The emulator (for @service-sdk/effect/testing's Emulator.layer) and the CLI are the same bundles:")
      console.log(`  npm install ${tools.map((name) => result.tarballs[name]).join(" ")}`)
    }
  }
}

/** The workspace's pinned version as a tilde range (`~3.22.4`): npm's `latest` of effect is Effect 4. */
function pinnedRange(name, range) {
  const { devDependencies = {} } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
  const pinned = devDependencies[name]
  return pinned !== undefined && /^\d+\.\d+\.\d+$/.test(pinned) ? `~${pinned}` : `"${range}"`
}

/** The Effect 4 line's pinned effect as a tilde range (`~4.1.0`: `effect/http` is tagged unstable, so the minor is pinned). */
function effect4Pinned() {
  const { devDependencies = {} } = JSON.parse(readFileSync(join(effect4Root, "package.json"), "utf8"))
  return `~${devDependencies.effect}`
}
