/**
 * Installing by name from a real npm registry (issue 39 items 2 and 3). A local verdaccio (scripts/registry.mjs, on
 * 127.0.0.1, storage in a temp folder, no uplink) receives every package of both lines, published by the release
 * script (`npm run release`: scripts/release.mjs) from the tarballs of `npm run pack`, each with its dist-tag. Then,
 * in fresh folders whose `.npmrc` has one line, `@service-sdk:registry=http://127.0.0.1:<port>/` (everything else
 * comes from npm's own registry), users install by name only, never a tarball path, as the READMEs say:
 *
 * - an Effect 4 app: `npm install @service-sdk/effect effect@4.1.0` gets the 2.x line (`latest`);
 * - an Effect 3 app: `npm install @service-sdk/effect@effect3` beside effect 3.22 and its platform packages gets 1.x;
 * - a plain app: `npm install @service-sdk/promise`, one package;
 * - `npx @service-sdk/cli --version`, and a token from the emulator with it;
 *
 * each with no install warning and at most one copy of Effect, and each runs its README's example against the
 * emulator (started here, from the workspace). npm and the apps run on the supported Node the Effect 4 line installs.
 */
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Emulator } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { effect4Node } from "../effect4.mjs"
import type { PackedBoth } from "../pack.mjs"
import { addUser, startRegistry } from "../registry.mjs"
import { packedByTheRun } from "./packed.js"

const root = join(import.meta.dirname, "..", "..")
const node = effect4Node
/** The machine's npm (and npx), run by the supported Node (npm judges `engines` against the Node it runs on). */
const npmCli = (() => {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    try {
      const real = realpathSync(join(dir, "npm"))
      if (real.endsWith("npm-cli.js")) return real
    } catch {}
  }
  throw new Error("npm not found on PATH")
})()
const npxCli = join(dirname(npmCli), "npx-cli.js")

const manifest = (dir: string) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
const effect4Version: string = manifest("packages/effect4/service-sdk").version
const effect3Version: string = manifest("packages/service-sdk").version
const cliVersion: string = manifest("packages/cli").version
const pinned4 = manifest("packages/effect4").devDependencies
const pinned3 = manifest(".").devDependencies

interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly output: string
}

/** Runs a command without blocking this worker (npm installs take minutes on a loaded machine). */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  new Promise<Ran>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, npm_config_update_notifier: "false", ...env }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr, output: `${stdout}${stderr}` }))
  })

/** npm as a user runs it in `cwd`: that folder's .npmrc, npm's default registry for everything else. */
const npm = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  run(node, [npmCli, ...args], cwd, { npm_config_loglevel: "warn", npm_config_fund: "false", ...env })

let dir = ""
let registry: Awaited<ReturnType<typeof startRegistry>> | undefined
let packedFile = ""
let packed: PackedBoth
/** the release's npm configuration: the scope's registry and the publisher's token */
let publishrc = ""
let emulator: Awaited<ReturnType<typeof Emulator.start>>
let emulatorEnv: Record<string, string> = {}
let albumName = ""

/** A fresh app folder: a package.json and an .npmrc with only the scoped-registry line. */
const app = (name: string, extra: Record<string, unknown> = {}) => {
  const cwd = join(dir, name)
  mkdirSync(cwd)
  writeFileSync(
    join(cwd, "package.json"),
    `${JSON.stringify({ name, private: true, type: "module", ...extra }, null, 2)}\n`
  )
  writeFileSync(join(cwd, ".npmrc"), `@service-sdk:registry=${registry!.url}\n`)
  return cwd
}

/** The versions of `effect` anywhere in the app's tree (`npm ls`). */
const effectVersions = async (cwd: string) => {
  const ls = await npm(["ls", "effect", "--all", "--json"], cwd)
  const versions = new Set<string>()
  const walk = (deps: Record<string, { version?: string; dependencies?: Record<string, unknown> }> = {}) => {
    for (const [name, dep] of Object.entries(deps)) {
      if (name === "effect" && dep.version !== undefined) versions.add(dep.version)
      walk(dep.dependencies as never)
    }
  }
  walk(JSON.parse(ls.stdout || "{}").dependencies)
  return [...versions]
}

/**
 * The installed package is the tarball that was packed and published: the app's lockfile records its integrity (the
 * registry's `resolved` URL may be left out: `omit-lockfile-registry-resolved`), and it is the tarball's sha512.
 */
const expectTheTarball = (cwd: string, name: string, tarball: string) => {
  const lock = JSON.parse(readFileSync(join(cwd, "package-lock.json"), "utf8"))
  const entry = lock.packages[`node_modules/${name}`]
  expect(entry?.resolved ?? "", name).not.toMatch(/^file:|\.tgz$/)
  expect(entry?.integrity, name).toBe(`sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`)
}

const noWarning = (output: string) => expect(output).not.toMatch(/npm warn|ERESOLVE|peer dep|EBADENGINE/i)

/** The first ```ts block of a README that imports `from`. */
const readmeExample = (readme: string, from: string) => {
  const block = [...readFileSync(join(root, readme), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .find((code) => code.includes(`from "${from}"`))
  if (block === undefined) throw new Error(`${readme} has no TypeScript example importing ${from}`)
  return block
}

/** Runs a README example in `cwd` against the emulator: it prints the album's name; one token request, one API call. */
const runExample = async (cwd: string, file: string, code: string) => {
  writeFileSync(join(cwd, file), code)
  const before = await emulator.stats()
  const ran = await run(node, [file], cwd, emulatorEnv)
  expect(ran.status, ran.output).toBe(0)
  expect(ran.output).toContain(albumName)
  const after = await emulator.stats()
  expect(after.tokenRequests.client_credentials - before.tokenRequests.client_credentials).toBe(1)
  expect(after.apiRequests.byStatus["200"]! - (before.apiRequests.byStatus["200"] ?? 0)).toBeGreaterThanOrEqual(1)
  expect(ran.output).not.toContain(emulator.clientSecret)
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "service-sdk-registry-"))
  // the tarballs `npm test` packed for every consumer test, or packed here
  const byTheRun = packedByTheRun()
  if (byTheRun !== undefined) {
    packed = byTheRun.packed
    packedFile = join(byTheRun.dir, "packages.json")
  } else {
    const packing = await run(node, [join(root, "scripts", "pack.mjs"), "--out", join(dir, "packs"), "--json"], root)
    if (packing.status !== 0) throw new Error(`npm run pack failed:\n${packing.output}`)
    packed = JSON.parse(packing.stdout) as PackedBoth
    packedFile = join(dir, "packs", "packages.json")
  }
  registry = await startRegistry()
  const token = await addUser(registry.url)
  const host = new URL(registry.url).host
  publishrc = join(dir, "publish.npmrc")
  writeFileSync(publishrc, `@service-sdk:registry=${registry.url}\n//${host}/:_authToken=${token}\n`)
  emulator = await Emulator.start({})
  emulatorEnv = {
    SERVICE_SDK_CLIENT_ID: emulator.clientId,
    SERVICE_SDK_CLIENT_SECRET: emulator.clientSecret,
    SERVICE_SDK_AUTH_URL: emulator.authUrl,
    SERVICE_SDK_API_URL: emulator.apiUrl
  }
  // the name the examples print, read from the emulator's data API
  const { access_token } = await emulator.signIn({ userId: "registry-test" })
  const album = await fetch(`${emulator.apiUrl}/albums/6akEvsycLGftJxYudPjmqK`, {
    headers: { authorization: `Bearer ${access_token}` }
  })
  albumName = ((await album.json()) as { name: string }).name
  expect(albumName.length).toBeGreaterThan(0)
}, 600_000)

afterAll(async () => {
  await emulator?.close()
  await registry?.stop()
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

/** Every tarball of both lines, with the dist-tag it must get. */
const expectedTags = () => [
  ...Object.keys(packed.effect4.tarballs).map((name) => ({ name, version: effect4Version, tag: "latest" })),
  ...Object.keys(packed.tarballs).map((name) => ({
    name,
    version: effect3Version,
    tag: name in packed.effect4.tarballs ? "effect3" : "latest"
  }))
]

describe("the release, into a local npm registry", () => {
  it("release:dry prints every package of both lines with its version and dist-tag; npm publish --dry-run of each is clean", async () => {
    expect(Object.keys(packed.effect4.tarballs).sort()).toEqual(["@service-sdk/effect", "@service-sdk/redis"])
    const dry = await run(
      process.execPath,
      [join(root, "scripts", "release.mjs"), "dry", "--packed", packedFile],
      root,
      {
        npm_config_userconfig: publishrc
      }
    )
    expect(dry.status, dry.output).toBe(0)
    const lines = dry.stdout.split("\n")
    for (const { name, version, tag } of expectedTags()) {
      const row = lines.find((line) => line.trim().startsWith(`${name} `) && line.includes(` ${version} `))
      expect(row, `${name}@${version}`).toMatch(new RegExp(`tag ${tag}\\s+publish`))
      expect(dry.stdout).toContain(
        `${name}@${version}: Publishing to ${registry!.url} with tag ${tag} and public access (dry-run)`
      )
    }
    // npm's own warnings (auto-corrected package.json fields, a missing login, …) are printed under their package
    expect(dry.output).not.toMatch(/npm (warn|error)/i)
  })

  it("npm run release publishes every package with its dist-tag: latest → 2.x, effect3 → 1.x", async () => {
    const release = await run(
      process.execPath,
      [join(root, "scripts", "release.mjs"), "publish", "--packed", packedFile, "--no-git-tag"],
      root,
      { npm_config_userconfig: publishrc }
    )
    expect(release.status, release.output).toBe(0)
    for (const name of ["@service-sdk/effect", "@service-sdk/redis"]) {
      const tags = await npm(["view", name, "dist-tags", "--json"], root, { npm_config_userconfig: publishrc })
      expect(JSON.parse(tags.stdout), name).toEqual({ latest: effect4Version, effect3: effect3Version })
    }
    for (const name of Object.keys(packed.tarballs).filter((name) => !(name in packed.effect4.tarballs))) {
      const tags = await npm(["view", name, "dist-tags", "--json"], root, { npm_config_userconfig: publishrc })
      expect(JSON.parse(tags.stdout), name).toEqual({ latest: effect3Version })
    }
    // a second run publishes nothing (every version is there) and succeeds
    const again = await run(
      process.execPath,
      [join(root, "scripts", "release.mjs"), "publish", "--packed", packedFile, "--no-git-tag"],
      root,
      { npm_config_userconfig: publishrc }
    )
    expect(again.status, again.output).toBe(0)
    expect(again.stdout.match(/already on the registry, skipped/g)?.length).toBe(expectedTags().length)
  })
})

describe("installed by name from the registry", () => {
  it("an Effect 4 app: npm install @service-sdk/effect gets the 2.x line, one effect (4.1.0), no warning; the README's example runs", async () => {
    const cwd = app("effect4-app")
    const install = await npm(["install", "@service-sdk/effect", `effect@${pinned4.effect}`], cwd)
    expect(install.status, install.output).toBe(0)
    noWarning(install.output)
    const installed = JSON.parse(
      readFileSync(join(cwd, "node_modules", "@service-sdk", "effect", "package.json"), "utf8")
    )
    expect(installed.version).toBe(effect4Version)
    expect(JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")).dependencies["@service-sdk/effect"]).toBe(
      `^${effect4Version}`
    )
    expectTheTarball(cwd, "@service-sdk/effect", packed.effect4.tarballs["@service-sdk/effect"]!)
    expect(await effectVersions(cwd)).toEqual([pinned4.effect])
    await runExample(cwd, "app.ts", readmeExample("packages/effect4/service-sdk/README.md", "@service-sdk/effect"))
  })

  it("an Effect 3 app: npm install @service-sdk/effect@effect3 gets the 1.x line beside effect 3.22, one effect, no warning; the README's example runs", async () => {
    // npm 11 warns about every dependency with an install script that the app has not approved or denied; Effect 3's
    // platform packages bring two (@parcel/watcher, msgpackr-extract), whatever else the app installs. The app denies
    // them as this repository does (its package.json's allowScripts), so that a warning left is one of ours
    const cwd = app("effect3-app", { allowScripts: manifest(".").allowScripts })
    const install = await npm(
      [
        "install",
        "@service-sdk/effect@effect3",
        `effect@~${pinned3.effect}`,
        `@effect/platform@~${pinned3["@effect/platform"]}`,
        `@effect/platform-node@~${pinned3["@effect/platform-node"]}`
      ],
      cwd
    )
    expect(install.status, install.output).toBe(0)
    noWarning(install.output)
    const installed = JSON.parse(
      readFileSync(join(cwd, "node_modules", "@service-sdk", "effect", "package.json"), "utf8")
    )
    expect(installed.version).toBe(effect3Version)
    expectTheTarball(cwd, "@service-sdk/effect", packed.tarballs["@service-sdk/effect"]!)
    const versions = await effectVersions(cwd)
    expect(versions.length).toBe(1)
    expect(versions[0]).toMatch(/^3\.22\./)
    await runExample(cwd, "app.ts", readmeExample("packages/service-sdk/README.md", "@service-sdk/effect"))
  })

  it("a plain app: npm install @service-sdk/promise is one package, no Effect, no warning, with its licence notices; the README's examples run", async () => {
    const cwd = app("plain-app")
    const install = await npm(["install", "@service-sdk/promise"], cwd)
    expect(install.status, install.output).toBe(0)
    noWarning(install.output)
    expect(readdirSync(join(cwd, "node_modules")).filter((name) => !name.startsWith("."))).toEqual(["@service-sdk"])
    expect(readdirSync(join(cwd, "node_modules", "@service-sdk"))).toEqual(["promise"])
    expectTheTarball(cwd, "@service-sdk/promise", packed.tarballs["@service-sdk/promise"]!)
    const notices = readFileSync(
      join(cwd, "node_modules", "@service-sdk", "promise", "dist", "THIRD_PARTY_NOTICES"),
      "utf8"
    )
    expect(notices).toMatch(/^- effect \d+\.\d+\.\d+ \(MIT\)$/m)
    const examples = [
      ...readFileSync(join(root, "packages", "promise", "README.md"), "utf8").matchAll(/```js\n([\s\S]*?)```/g)
    ]
      .map((match) => match[1]!)
      .filter((code) => /^\/\/ run: (esm|cjs)\n/.test(code))
    expect(examples.length).toBeGreaterThan(0)
    const before = await emulator.stats()
    for (const [index, code] of examples.entries()) {
      const file = `example-${index}.${code.startsWith("// run: esm") ? "mjs" : "cjs"}`
      writeFileSync(join(cwd, file), code)
      const ran = await run(node, [file], cwd, emulatorEnv)
      expect({ file, status: ran.status, stderr: ran.stderr }).toEqual({ file, status: 0, stderr: "" })
      expect(ran.stdout).not.toContain(emulator.clientSecret)
    }
    expect((await emulator.stats()).tokenRequests.total).toBeGreaterThan(before.tokenRequests.total)
  })

  it("npx @service-sdk/cli --version prints the CLI's version with no warning, and its token command gets a token from the emulator", async () => {
    const cwd = app("cli")
    // npx's own cache in this test's folder: a CLI of the same version from another run's registry is not reused
    const env = { npm_config_cache: join(dir, "npx-cache"), npm_config_yes: "true" }
    const version = await run(node, [npxCli, "@service-sdk/cli", "--version"], cwd, {
      npm_config_loglevel: "warn",
      ...env
    })
    expect(version.status, version.output).toBe(0)
    noWarning(version.output)
    expect(version.stdout.trim()).toContain(cliVersion)
    const token = await run(node, [npxCli, "@service-sdk/cli", "token", "--json"], cwd, {
      npm_config_loglevel: "warn",
      ...env,
      ...emulatorEnv,
      HOME: join(dir, "cli-home")
    })
    expect(token.status, token.output).toBe(0)
    expect(JSON.parse(token.stdout.trim())).toBeTypeOf("object")
    // the CLI from the registry: at most one copy of Effect in what npx installed for it
    const npx = join(dir, "npx-cache", "_npx")
    for (const hash of existsSync(npx) ? readdirSync(npx) : []) {
      const installed = join(npx, hash)
      if (existsSync(join(installed, "node_modules", "@service-sdk", "cli")))
        expect((await effectVersions(installed)).length).toBeLessThanOrEqual(1)
    }
  })

  it("the emulator installs by name beside Effect 4 (a bundle: no peer on Effect), with no warning and one effect", async () => {
    const cwd = app("effect4-emulator")
    const install = await npm(["install", `effect@${pinned4.effect}`, "@service-sdk/effect"], cwd)
    expect(install.status, install.output).toBe(0)
    const emulatorInstall = await npm(["install", "--save-dev", "@service-sdk/emulator"], cwd)
    expect(emulatorInstall.status, emulatorInstall.output).toBe(0)
    noWarning(emulatorInstall.output)
    const versions = await effectVersions(cwd)
    expect(versions.length).toBe(1)
    expect(versions[0]).toMatch(/^4\./)
    writeFileSync(
      join(cwd, "start.mjs"),
      [
        'import { Emulator } from "@service-sdk/emulator"',
        "const emulator = await Emulator.start({})",
        "console.log(JSON.stringify({ authUrl: emulator.authUrl, apiUrl: emulator.apiUrl }))",
        "await emulator.close()"
      ].join("\n")
    )
    const started = await run(node, ["start.mjs"], cwd)
    expect(started.status, started.output).toBe(0)
    expect(JSON.parse(started.stdout.trim()).apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+/)
  })
})
