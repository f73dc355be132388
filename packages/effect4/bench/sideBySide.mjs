#!/usr/bin/env node
// `npm run bench:effect4`: the Effect 3 and Effect 4 lines side by side, each in its own process, both on the Node
// the Effect 4 line installs, on their built packages (run `npx tsc -b` first; the script does). Prints a table and
// writes packages/effect4/bench/results/side-by-side.json. Every figure is also a ratio against a baseline measured
// in the same process (see packages/shared/bench/measure.mjs).
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..")
const node = join(root, "packages", "effect4", "node_modules", ".bin", "node")
execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b"], { cwd: root, stdio: "inherit" })
const run = (script) => JSON.parse(execFileSync(node, [script], { encoding: "utf8" }).trim().split("\n").at(-1))
const e3 = run(join(root, "packages", "shared", "bench", "effect3.mjs"))
const e4 = run(join(root, "packages", "effect4", "bench", "effect4.mjs"))

const rows = [
  ["cached getAccessToken (ns/call)", e3.cachedNs, e4.cachedNs],
  ["  ratio to Ref.get + Clock (higher is better)", e3.cachedRatio, e4.cachedRatio],
  ["herd K=1,000 (ms to serve all)", e3.herd[1000].ms, e4.herd[1000].ms],
  ["  token requests", e3.herd[1000].tokenRequests, e4.herd[1000].tokenRequests],
  ["herd K=10,000 (ms to serve all)", e3.herd[10000].ms, e4.herd[10000].ms],
  ["  token requests", e3.herd[10000].tokenRequests, e4.herd[10000].tokenRequests],
  ["ServiceClient.http GET + JSON (ns/call)", e3.requestNs, e4.requestNs],
  ["  ratio to raw HttpClient + header (higher is better)", e3.requestRatio, e4.requestRatio]
]
const format = (value) => (Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 2 : 0))
console.log(
  `\nEffect 3 line vs Effect 4 line, same Node (${e4.node}), medians of ${process.env.BENCH_ROUNDS ?? 5} rounds\n`
)
console.log(`${"".padEnd(52)} ${"Effect 3".padStart(10)} ${"Effect 4".padStart(10)}`)
for (const [label, a, b] of rows) console.log(`${label.padEnd(52)} ${format(a).padStart(10)} ${format(b).padStart(10)}`)
const out = join(import.meta.dirname, "results")
mkdirSync(out, { recursive: true })
writeFileSync(join(out, "side-by-side.json"), `${JSON.stringify({ effect3: e3, effect4: e4 }, null, 2)}\n`)
