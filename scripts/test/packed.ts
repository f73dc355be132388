/**
 * The tarballs `npm test` packed once for all the consumer tests of both lines (`scripts/test.mjs` runs
 * `scripts/pack.mjs` and names its `packages.json` in SERVICE_SDK_PACKED), or undefined when a consumer test runs on
 * its own: then it packs for itself, as before.
 */
import { readFileSync } from "node:fs"
import { dirname } from "node:path"
import type { PackedBoth } from "../pack.mjs"

export const packedByTheRun = (): { readonly packed: PackedBoth; readonly dir: string } | undefined => {
  const file = process.env.SERVICE_SDK_PACKED
  if (file === undefined || file === "") return undefined
  return { packed: JSON.parse(readFileSync(file, "utf8")) as PackedBoth, dir: dirname(file) }
}
