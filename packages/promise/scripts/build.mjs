/**
 * Builds `@service-sdk/promise`: the `service-sdk/promise` facade (src/index.ts re-exports it with plain types)
 * bundled with the Effect runtime it uses: one tree-shaken CommonJS module (short identifiers, the public classes'
 * names kept, short lines) with a source map (dist/index.cjs), and an ES module entry (dist/index.js) that re-exports it, so `import` and `require` share one
 * copy (one `instanceof`, one cache, no dual-package hazard). The HTTP client is Node's built-in `fetch`
 * (src/internal/fetchHttpClient.ts) instead of a bundled undici; `ioredis` is the app's own, required when a Redis
 * cache opens a connection (src/internal/ioredis.ts). The `.d.ts` comes from `tsc -b` (no Effect type);
 * it is copied for `require` as `.d.cts`. Run after `tsc -b` (the root `build` does both).
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = fileURLToPath(new URL("..", import.meta.url))
const dist = join(root, "dist")
// built aside and moved in, so that a test reading dist never sees half a build
const staging = join(root, `dist.tmp-${process.pid}`)

/** The facade's default HTTP client, swapped for the fetch-based one. */
const fetchClient = {
  name: "fetch-http-client",
  setup(build) {
    build.onResolve({ filter: /^@effect\/platform-node\/NodeHttpClient$/ }, () => ({
      path: join(root, "src", "internal", "fetchHttpClient.ts")
    }))
  }
}

/** `@service-sdk/redis`'s `ioredis`, swapped for the app's own, loaded on first use. */
const appIoredis = {
  name: "app-ioredis",
  setup(build) {
    const shim = join(root, "src", "internal", "ioredis.ts")
    build.onResolve({ filter: /^ioredis$/ }, (args) =>
      args.importer === shim ? { path: "ioredis", external: true } : { path: shim }
    )
  }
}

/** `node:crypto`, loaded on first use (src/internal/crypto.ts; no crypto function runs at import). */
const lazyCrypto = {
  name: "lazy-crypto",
  setup(build) {
    const shim = join(root, "src", "internal", "crypto.ts")
    build.onResolve({ filter: /^(node:)?crypto$/ }, (args) =>
      args.importer === shim ? { path: "node:crypto", external: true } : { path: shim }
    )
  }
}

rmSync(staging, { recursive: true, force: true })
await build({
  absWorkingDir: root,
  entryPoints: ["src/index.ts"],
  outfile: join(staging, "index.cjs"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // Minified, but in lines of about 80 characters (an unhandled rejection prints one short source line, not a
  // one-line bundle). No `keepNames`: it wraps ~2,000 functions in a `__name` call at import (~5 ms of a cold start);
  // the public classes carry their names themselves (`e.name`, `constructor.name`, stack headers read
  // `AuthenticationError`: ServiceError.ts, src/index.ts)
  minify: true,
  lineLimit: 80,
  treeShaking: true,
  sourcemap: true,
  sourcesContent: false,
  conditions: ["source"],
  plugins: [fetchClient, appIoredis, lazyCrypto],
  legalComments: "none",
  logLevel: "warning"
})
const names = Object.keys(createRequire(import.meta.url)(join(staging, "index.cjs"))).sort()
// loaded with `require`, not `import`: Node then does not lex the whole bundle for its export names
writeFileSync(
  join(staging, "index.js"),
  `import { createRequire } from "node:module"\nconst m = createRequire(import.meta.url)("./index.cjs")\nexport const { ${names.join(", ")} } = m\n`
)

mkdirSync(dist, { recursive: true })
rmSync(join(dist, "chunks"), { recursive: true, force: true })
for (const file of ["index.js", "index.cjs", "index.cjs.map"]) renameSync(join(staging, file), join(dist, file))
rmSync(join(dist, "index.js.map"), { force: true })
rmSync(staging, { recursive: true, force: true })
if (!existsSync(join(dist, "index.d.ts"))) throw new Error("dist/index.d.ts is missing: run `tsc -b` first")
// copied aside and renamed in, so that a test reading dist never sees half a file
copyFileSync(join(dist, "index.d.ts"), join(dist, `index.d.cts.tmp-${process.pid}`))
renameSync(join(dist, `index.d.cts.tmp-${process.pid}`), join(dist, "index.d.cts"))
