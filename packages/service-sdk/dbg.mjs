import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import { TokenCache } from "service-sdk"
import { writeFileSync, mkdtempSync } from "node:fs"
const dir = mkdtempSync("/tmp/dbg-"); writeFileSync(dir + "/file", "x")
const path = process.argv[2] === "proc" ? "/proc/service-sdk-test/tokens.json" : dir + "/file/tokens.json"
const p = Effect.gen(function* () {
  const cache = yield* TokenCache.file(path)
  const r = yield* Effect.either(cache.withLock(Effect.void))
  console.log(r._tag, r.left?.message)
}).pipe(Effect.provide(NodeFileSystem.layer), Effect.timeout("3 seconds"))
Effect.runPromise(p).then(() => console.log("done"), (e) => console.log("err", String(e)))
