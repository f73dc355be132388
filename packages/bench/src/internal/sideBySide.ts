/**
 * The hook that runs the side-by-side parts (13-15: `packages/effect4/bench`) after this bench's own: on the Node of
 * the Effect 4 line, with the same mode; their JSON goes beside this bench's (`results/effect4.json`, or
 * `<out>.effect4.json`).
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const node = join(root, "packages", "effect4", "node_modules", ".bin", "node")
const main = join(root, "packages", "effect4", "bench", "dist", "main.js")

/** The side-by-side parts' ids. */
export const PARTS = [13, 14, 15] as const

/** Runs the side-by-side parts (those of `only`, when given); their exit status (0 when none was asked for). */
export const effect4SideBySide = (options: {
  readonly quick: boolean
  readonly out: string | undefined
  readonly only: ReadonlySet<number> | undefined
}): number => {
  const ids = PARTS.filter((id) => options.only === undefined || options.only.has(id))
  if (ids.length === 0) return 0
  if (!existsSync(node) || !existsSync(main)) {
    console.log(
      "side-by-side parts 13-15 skipped: the Effect 4 line is not installed or built (npm install, then npx tsc -b)"
    )
    return 1
  }
  const args = ["--expose-gc", main, "--only", ids.join(",")]
  if (options.quick) args.push("--quick")
  if (options.out !== undefined) args.push("--out", options.out.replace(/(\.json)?$/, ".effect4.json"))
  return spawnSync(node, args, { stdio: "inherit" }).status ?? 1
}
