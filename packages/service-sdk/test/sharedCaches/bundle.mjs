// Bundles a worker script of this folder into one file, from the packages' sources (the "source" export condition):
// a process then loads one file instead of hundreds of modules. Shared by hammer.mjs and support.ts.
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../../", import.meta.url))

/** Bundles `./<name>.mjs` to `packages/service-sdk/build/shared-caches/<name>.mjs`; returns that path. */
export const bundle = (name) => {
  const out = join(root, "packages", "service-sdk", "build", "shared-caches", `${name}.mjs`)
  execFileSync(
    join(root, "node_modules", ".bin", "esbuild"),
    [
      fileURLToPath(new URL(`./${name}.mjs`, import.meta.url)),
      "--bundle",
      "--platform=node",
      "--format=esm",
      "--conditions=source",
      "--log-level=warning",
      // bundled CommonJS dependencies call require(): give the bundle one
      "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      `--outfile=${out}`
    ],
    { stdio: "pipe", cwd: root }
  )
  return out
}
