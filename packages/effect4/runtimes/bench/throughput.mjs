#!/usr/bin/env node
/**
 * The Promise package's cached `getAccessToken()` on Node, Bun and Deno: calls per second once the token is cached
 * (fixtures/promise.mjs "bench", five rounds each), against an emulator it starts.
 *
 *   packages/effect4/node_modules/.bin/node packages/effect4/runtimes/bench/throughput.mjs [calls per round]
 */
import { spawn, spawnSync } from "node:child_process"
import { join } from "node:path"

const here = import.meta.dirname
const effect4 = join(here, "..", "..")
const root = join(effect4, "..", "..")
const calls = process.argv[2] ?? "20000"

const emulator = spawn(
  process.execPath,
  [join(root, "packages", "emulator", "bin", "service-sdk-emulator.js"), "--port", "0"],
  {
    stdio: ["ignore", "pipe", "inherit"]
  }
)
const env = await new Promise((resolve) => {
  let out = ""
  emulator.stdout.on("data", (chunk) => {
    out += chunk
    const found = Object.fromEntries([...out.matchAll(/export (SERVICE_SDK_\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
    if (found.SERVICE_SDK_CLIENT_SECRET !== undefined) resolve(found)
  })
})
const runtimes = {
  node: [process.execPath, []],
  bun: [join(effect4, "node_modules", ".bin", "bun"), []],
  deno: [join(effect4, "node_modules", ".bin", "deno"), ["run", "--allow-all", "--no-prompt"]]
}
try {
  for (const [name, [binary, pre]] of Object.entries(runtimes)) {
    const version = spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout.trim().split("\n")[0]
    const result = spawnSync(binary, [...pre, join(here, "..", "fixtures", "promise.mjs"), "bench", calls], {
      encoding: "utf8",
      env: { ...process.env, ...env, PROMISE_ENTRY: join(root, "packages", "promise", "dist", "index.js") }
    })
    const { callsPerSecond } = JSON.parse(result.stdout.trim().split("\n").at(-1))
    const sorted = [...callsPerSecond].sort((a, b) => a - b)
    console.log(`${name} (${version}): median ${sorted[2]} calls/s, rounds ${callsPerSecond.join(" ")}`)
  }
} finally {
  emulator.kill("SIGTERM")
}
