/**
 * vitest globalSetup of the fault tests: their workers are plain `node` processes on the built packages, so build
 * them first (`tsc -b` is incremental: about a second when nothing changed).
 */
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../../../", import.meta.url))

/** `tsc -b` of these projects (paths from the repository's root). */
export const build = (projects: ReadonlyArray<string>): void => {
  try {
    execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b", ...projects.map((project) => join(root, project))], {
      stdio: "pipe"
    })
  } catch (error) {
    // Type errors elsewhere still emit JavaScript; the workers fail loudly if what they need is missing.
    console.warn(
      `tsc -b reported errors before the fault tests:\n${String((error as { stdout?: unknown }).stdout ?? error)}`
    )
  }
}

export default function setup(): void {
  build(["packages/redis/tsconfig.src.json"])
}
