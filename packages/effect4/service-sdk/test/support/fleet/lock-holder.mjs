// Takes the lock file of argv[2] (lock TTL argv[3]) with the built Effect 4 package and holds it forever, printing
// "held" once it has it (the lock-file tests kill or freeze this process).
import * as Effect from "effect/Effect"
import { TokenCache } from "../../../dist/index.js"

// the lock's heartbeat does not keep a process alive by itself (its timer is unref'd): this one must stay
setInterval(() => {}, 60_000)
const cache = await Effect.runPromise(TokenCache.file(process.argv[2], { lockTtl: process.argv[3] }))
await Effect.runPromise(
  cache.withLock(
    Effect.andThen(
      Effect.sync(() => console.log("held")),
      Effect.never
    )
  )
)
