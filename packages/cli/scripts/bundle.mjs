/**
 * Bundles the CLI's bin for start-up time: one minified ES module plus chunks that load when a command runs
 * (`commands.ts` imports the handlers lazily), instead of the ~500 modules `node` would otherwise resolve and load.
 * Built from the TypeScript sources of the workspace (the "source" export condition); `tsc -b` type-checks them.
 * Everything the CLI runs is inside (Effect 3, `@effect/cli`, the SDK, the emulator): the package has no dependency
 * and no peer, so it installs beside Effect 3, Effect 4 or none (DESIGN.md section 9). Its plain entry
 * (`src/index.ts`: `help`) is bundled too, into `dist/index.js` (replacing `tsc`'s, which imports Effect).
 */
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { writeNotices } from "../../../scripts/notices.mjs"

const cli = fileURLToPath(new URL("..", import.meta.url))
const outdir = join(cli, "bundle")
// Tests may run the bin while another test rebuilds it: build aside, then move each file in atomically (chunks
// first, the entry last).
const staging = join(cli, `bundle.tmp-${process.pid}`)

rmSync(staging, { recursive: true, force: true })
const result = await build({
  absWorkingDir: cli,
  entryPoints: { bin: "src/bin.ts" },
  outdir: staging,
  metafile: true,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  conditions: ["source"],
  // CommonJS dependencies (undici, ioredis) call `require`: give the ES module one
  banner: { js: 'import{createRequire as __cr}from"node:module";const require=__cr(import.meta.url);' },
  chunkNames: "chunks/[name]-[hash]",
  legalComments: "linked",
  logLevel: "warning"
})

const written = Object.keys(result.metafile.outputs).map((file) => relative(staging, join(cli, file)))
for (const file of [...written.filter((file) => file !== "bin.js"), "bin.js"]) {
  mkdirSync(dirname(join(outdir, file)), { recursive: true })
  renameSync(join(staging, file), join(outdir, file))
}
rmSync(staging, { recursive: true, force: true })

// the plain entry: one module, built aside and renamed in
const indexStaging = join(cli, "dist", `index.js.tmp-${process.pid}`)
await build({
  absWorkingDir: cli,
  entryPoints: ["src/index.ts"],
  outfile: indexStaging,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  conditions: ["source"],
  banner: { js: 'import{createRequire as __cr}from"node:module";const require=__cr(import.meta.url);' },
  legalComments: "none",
  logLevel: "warning"
})
renameSync(indexStaging, join(cli, "dist", "index.js"))
rmSync(join(cli, "dist", "index.js.map"), { force: true })

// `--clean` (prepack): chunks the new build does not have go once it is in place (never the whole directory first: a
// test running the bin meanwhile would find no bin.js)
if (process.argv.includes("--clean")) {
  const kept = new Set(written)
  for (const file of readdirSync(join(outdir, "chunks"))) {
    if (!kept.has(`chunks/${file}`)) rmSync(join(outdir, "chunks", file))
  }
}
// the licence notices of what the bundle embeds (Effect, @effect/cli, undici, ...), shipped beside it
writeNotices(result.metafile, { workingDir: cli, out: join(outdir, "THIRD_PARTY_NOTICES") })
