/**
 * Bundles `@service-sdk/emulator` (DESIGN.md section 9: the emulator is a bundle, with no peer on Effect, so it
 * installs beside Effect 3, Effect 4 or none): the plain API (`dist/index.js`: `Emulator.start`, the constants,
 * `EmulatorError`) and the bin (`dist/bin.js`), ES modules that share their code in `dist/chunks/`, with the Effect 3
 * runtime and platform they run on inside. Built from the TypeScript sources (the "source" export condition); run
 * after `tsc -b`, whose `.d.ts` files (no Effect type in the public ones) are what the package declares, and whose
 * `dist/index.js` and `dist/bin.js` this replaces.
 *
 *   node scripts/bundle.mjs
 */
import { mkdirSync, renameSync, rmSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { writeNotices } from "../../../scripts/notices.mjs"

const emulator = fileURLToPath(new URL("..", import.meta.url))
const dist = join(emulator, "dist")
// Tests may run the bin while another build runs: build aside, then move each file in (chunks first, entries last).
const staging = join(emulator, `dist.bundle-${process.pid}`)

/** Builds the bundle into `dist/`; returns the files written (relative to `dist/`). */
export const bundle = async () => {
  rmSync(staging, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: emulator,
    entryPoints: { index: "src/index.ts", bin: "src/bin.ts" },
    outdir: staging,
    metafile: true,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    minify: true,
    // readable stack frames and class names in a user's test output
    keepNames: true,
    conditions: ["source"],
    // CommonJS dependencies bundled in (undici) call `require`: give the ES module one
    banner: { js: 'import{createRequire as __cr}from"node:module";const require=__cr(import.meta.url);' },
    chunkNames: "chunks/[name]-[hash]",
    legalComments: "linked",
    logLevel: "warning"
  })
  const written = Object.keys(result.metafile.outputs).map((file) => relative(staging, join(emulator, file)))
  rmSync(join(dist, "chunks"), { recursive: true, force: true })
  const entries = new Set(["index.js", "bin.js"])
  for (const file of [...written.filter((file) => !entries.has(file)), ...entries]) {
    mkdirSync(dirname(join(dist, file)), { recursive: true })
    renameSync(join(staging, file), join(dist, file))
  }
  rmSync(staging, { recursive: true, force: true })
  // tsc's source maps of the two files replaced (the bundle has none)
  for (const file of entries) rmSync(join(dist, `${file}.map`), { force: true })
  // the licence notices of what the bundle embeds (Effect, the platform, undici, ...), shipped beside it
  writeNotices(result.metafile, { workingDir: emulator, out: join(dist, "THIRD_PARTY_NOTICES") })
  return written
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await bundle()
}
