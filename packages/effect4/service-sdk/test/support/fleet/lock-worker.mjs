// The Effect 4 line's twin of the Effect 3 line's lockWorker.mjs (packages/service-sdk/test/sharedCaches), on the
// built package (dist/): the same config, the same log lines, so the SIGKILL hammer (hammer.mjs) can mix the lines.
// node lock-worker.mjs '<json config>'   config: { mode: "hold" | "take" | "hammer" | "sweep", name, path, log,
// lockTtl?, lockWait?, holdMs? }
import { appendFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenCache, TokenInfo } from "../../../dist/index.js"

const config = JSON.parse(process.argv[2])
const log = (line) => appendFileSync(config.log, `${line}\n`)
const options = {
  ...(config.lockTtl !== undefined ? { lockTtl: config.lockTtl } : {}),
  ...(config.lockWait !== undefined ? { lockWait: config.lockWait } : {})
}
const counter = (n) =>
  new TokenInfo({
    accessToken: Redacted.make(`count-${n}`),
    expiresAt: n,
    refreshToken: Redacted.make(`rt-${n}-CANARY`)
  })
const countOf = (found) => (Option.isNone(found) ? 0 : Number(Redacted.value(found.value.accessToken).slice(6)))
const pause = (max) => Effect.sleep(`${Math.floor(Math.random() * max)} millis`)

const program = Effect.gen(function* () {
  const cache = yield* TokenCache.file(config.path, options)
  if (config.mode === "hold") {
    yield* cache.withLock(
      Effect.gen(function* () {
        log(`locked ${config.name}`)
        yield* Effect.sleep(`${config.holdMs} millis`)
        log(`released ${config.name}`)
      })
    )
  } else if (config.mode === "take") {
    yield* cache.withLock(Effect.sync(() => log(`acquired ${config.name}`)))
  } else if (config.mode === "sweep") {
    yield* cache.withLock(Effect.void)
  } else {
    log(`ready ${config.name}`)
    for (;;) {
      yield* cache
        .withLock(
          Effect.gen(function* () {
            log(`enter ${config.name}`)
            const found = yield* cache.get
            yield* pause(8)
            const n = countOf(found)
            if (yield* cache.compareAndSet(found, counter(n + 1))) log(`inc ${n + 1}`)
            log(`exit ${config.name}`)
          })
        )
        .pipe(
          // a holder paused past the lock's TTL whose lock was taken over: its read under the lock fails (what a
          // renewal decides on is vouched for by the lock), as designed; it tries again
          Effect.catchIf(
            (error) => String(error?.message).startsWith("lost the token lock file"),
            () => Effect.sync(() => log(`exit ${config.name}`))
          )
        )
      yield* pause(4)
    }
  }
})

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`worker failed: ${error?.message ?? error}\n`)
    process.exit(1)
  }
)
