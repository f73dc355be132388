/**
 * An ablation of the SDK's request path, built by the bench and never shipped: the SDK's own build (`dist`) bundled
 * by esbuild into a module of the bench's, with the per-attempt bound (`client/attemptTimeout.js`) replaced by code
 * that runs the attempt in the caller's fiber with no bound. Every dependency stays external (the same `effect` and
 * platform copies as the real SDK), so the ablated client differs from the real one in that file only. It answers
 * "what does the attempt's bound cost?" beside the real figures; the SDK's source is not touched.
 */
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"

/** The per-attempt bound with no bound: Effect 3 line (`timeoutFail(self, duration, onTimeout, ownFiber)`). */
export const EFFECT3_UNBOUNDED = [
  'import * as Effect from "effect/Effect"',
  "export const timeoutFail = (self, _duration, _onTimeout, ownFiber = Effect.void) => Effect.zipRight(ownFiber, self)"
].join("\n")

/** The same for the Effect 4 line (`timeoutOrElse(self, duration, orElse)`). */
export const EFFECT4_UNBOUNDED = "export const timeoutOrElse = (self) => self"

/**
 * Bundles the SDK entry `entry` (a `file:` URL or path of its built `index.js`) into `outfile` with
 * `attemptTimeout.js` replaced by `contents`, and imports it; undefined (with the reason) when the SDK's build has
 * no such file (its request path was reorganised: the ablation must follow it).
 */
export const ablatedSdk = async <A>(
  entry: string,
  outfile: string,
  contents: string
): Promise<{ readonly module: A } | { readonly missing: string }> => {
  const path = entry.startsWith("file:") ? fileURLToPath(entry) : entry
  let replaced = 0
  mkdirSync(dirname(outfile), { recursive: true })
  await build({
    entryPoints: [path],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "silent",
    plugins: [
      {
        name: "unbounded-attempt",
        setup(builder) {
          // every package stays external (the ablated SDK runs on the same effect and platform as the real one); the
          // SDK's own subpath imports (`#file-cache`) are bundled, resolved as Node resolves them
          builder.onResolve({ filter: /^[^./#]/ }, (args) =>
            args.kind === "entry-point" ? undefined : { path: args.path, external: true }
          )
          builder.onLoad({ filter: /[\\/]client[\\/]attemptTimeout\.js$/ }, () => {
            replaced++
            return { contents, loader: "js" }
          })
        }
      }
    ]
  })
  if (replaced !== 1) return { missing: `the SDK's build has no client/attemptTimeout.js (${replaced} found)` }
  return { module: (await import(pathToFileURL(outfile).href)) as A }
}
