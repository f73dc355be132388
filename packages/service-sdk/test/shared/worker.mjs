// One process sharing a token file (or a directory of them), run by plain `node` on the built packages (dist):
//   node worker.mjs '<json config>'
// config: { mode: "file" | "handWritten" | "casOnly" | "holdLock" | "users", path, authUrl, apiUrl?, clientId,
//           clientSecret, callers, pauseMs, skew, lockTtl?, users? (ids, mode "users") }
// Prints one JSON line per event on stdout: {"event":"ready"}, {"event":"refresh","rt":<hash>} (a refresh token
// presented), {"event":"invalid_grant"}, {"event":"locked"} (holdLock), {"event":"report", ...} (mode "users": with
// every user's calls, failed or not, in `callsByUser`). Commands on stdin,
// one per line: "go" (callers start), "pause" (callers
// finish their call and wait), "report" (counts since the last report), "signOut <userId>", "stop".
// Tokens are reported as short hashes only.
import { mkdirSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from "node:fs"
import { createHash } from "node:crypto"
import { createInterface } from "node:readline"
import { HttpClient } from "@effect/platform"
import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import { AuthorizationCode, TokenCache, TokenStore, UserTokens } from "@service-sdk/effect"

const config = JSON.parse(process.argv[2])
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`)
const hash = (token) => createHash("sha256").update(token).digest("hex").slice(0, 12)
const isTokenCall = (request) => request.url.endsWith("/api/token")

const Http = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) =>
    client.pipe(
      HttpClient.tapRequest((request) =>
        Effect.sync(() => {
          if (!isTokenCall(request) || request.body._tag !== "Uint8Array") return
          const rt = new URLSearchParams(new TextDecoder().decode(request.body.body)).get("refresh_token")
          if (rt !== null) emit({ event: "refresh", rt: hash(rt) })
        })
      ),
      HttpClient.tap((response) =>
        isTokenCall(response.request) && response.status === 400
          ? Effect.map(
              Effect.orElseSucceed(response.json, () => null),
              (body) => {
                if (body?.error === "invalid_grant") emit({ event: "invalid_grant" })
              }
            )
          : Effect.void
      )
    )
  )
).pipe(Layer.provide(NodeHttpClient.layerUndici))

/**
 * A cache written as a user would write one, on node:fs alone: lock directories (mkdir is exclusive), one held
 * through a renewal (`withLock`, declared unless `casOnly`) and one for the short compare-and-set of the JSON's
 * access and refresh token (atomic on its own: the provider calls it while it holds `withLock`).
 */
const handWritten = (path, withLockDeclared) => {
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
  const locker = (lockDir) => ({
    lock: async () => {
      for (;;) {
        try {
          mkdirSync(lockDir)
          return
        } catch {
          await sleep(5 + Math.random() * 10)
        }
      }
    },
    unlock: () => rmdirSync(lockDir)
  })
  const { lock, unlock } = locker(`${path}.caslock`)
  const renewal = locker(`${path}.renewlock`)
  const read = () => {
    try {
      return TokenCache.decodeJson(readFileSync(path, "utf8"))
    } catch {
      return Option.none()
    }
  }
  const write = (token) => {
    const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
    writeFileSync(tmp, TokenCache.encodeJson(token), { mode: 0o600 })
    renameSync(tmp, path)
  }
  const guarded = (f) =>
    Effect.promise(async () => {
      await lock()
      try {
        return f()
      } finally {
        unlock()
      }
    })
  const cache = {
    get: Effect.sync(read),
    set: (token) => Effect.sync(() => write(token)),
    clear: Effect.sync(() => rmSync(path, { force: true })),
    compareAndSet: (expected, next) =>
      guarded(() => {
        if (!TokenCache.sameEntry(expected, read())) return false
        write(next)
        return true
      })
  }
  if (withLockDeclared) {
    cache.withLock = (self) =>
      Effect.acquireUseRelease(
        Effect.promise(renewal.lock),
        () => self,
        () => Effect.sync(renewal.unlock)
      )
  }
  return cache
}

const fresh = () => ({ calls: 0, errors: {}, maxMs: 0, tokens: new Set(), byUser: {}, callsByUser: {} })
let stats = fresh()
let running = false
/** Calls under way. */
let busy = 0
let stopping = false

const record = (key, exit, ms) => {
  stats.calls++
  if (key !== undefined) stats.callsByUser[key] = (stats.callsByUser[key] ?? 0) + 1
  stats.maxMs = Math.max(stats.maxMs, ms)
  if (exit._tag === "Right") {
    stats.tokens.add(hash(Redacted.value(exit.right)))
  } else {
    const tag = exit.left?._tag ?? "Defect"
    stats.errors[tag] = (stats.errors[tag] ?? 0) + 1
    if (key !== undefined) {
      const user = stats.byUser[key] ?? { errors: 0, maxMs: 0, messages: new Set(), durations: [] }
      stats.byUser[key] = user
      user.errors++
      user.maxMs = Math.max(user.maxMs, ms)
      user.durations.push(ms)
      user.messages.add(String(exit.left?.message ?? exit.left).slice(0, 120))
    }
  }
}

const callerLoop = (get, key) =>
  Effect.gen(function* () {
    while (!stopping) {
      if (!running) {
        yield* Effect.sleep("20 millis")
        continue
      }
      const start = performance.now()
      busy++
      const exit = yield* Effect.either(get(key))
      busy--
      record(key, exit, performance.now() - start)
      yield* Effect.sleep(`${config.pauseMs} millis`)
    }
  })

const report = () => {
  const byUser = {}
  for (const [user, entry] of Object.entries(stats.byUser)) {
    const sorted = [...entry.durations].sort((a, b) => a - b)
    byUser[user] = {
      errors: entry.errors,
      maxMs: Math.round(entry.maxMs),
      medianMs: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
      messages: [...entry.messages]
    }
  }
  emit({
    event: "report",
    calls: stats.calls,
    errors: stats.errors,
    maxMs: Math.round(stats.maxMs),
    tokens: [...stats.tokens],
    byUser,
    callsByUser: stats.callsByUser
  })
  stats = fresh()
}

const commands = (handlers) =>
  Effect.async((resume) => {
    const lines = createInterface({ input: process.stdin })
    lines.on("line", (line) => {
      const [command, argument] = line.trim().split(" ")
      if (command === "go") running = true
      else if (command === "pause") {
        running = false
        const idle = setInterval(() => {
          if (busy > 0) return
          clearInterval(idle)
          emit({ event: "paused" })
        }, 10)
      } else if (command === "report") report()
      else if (command === "stop") {
        stopping = true
        report()
        lines.close()
        resume(Effect.void)
      } else handlers[command]?.(argument)
    })
  })

const fileOptions = config.lockTtl === undefined ? undefined : { lockTtl: config.lockTtl }

const program = Effect.gen(function* () {
  if (config.mode === "holdLock") {
    const cache = yield* TokenCache.file(config.path, fileOptions ?? {})
    emit({ event: "ready" })
    return yield* cache.withLock(
      Effect.zipRight(
        Effect.sync(() => emit({ event: "locked" })),
        Effect.never
      )
    )
  }
  if (config.mode === "users") {
    const store = yield* TokenStore.directory(config.path, fileOptions ?? {})
    const users = yield* UserTokens.make({
      authUrl: config.authUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      redirectUri: "http://127.0.0.1:1/callback",
      skew: config.skew,
      store
    })
    const rounds = new Map()
    /** Every few calls of a user, the API says whose token it is: it must be that user's. */
    const get = (userId) =>
      Effect.gen(function* () {
        const token = yield* users.provider(userId).getAccessToken
        const round = (rounds.get(userId) ?? 0) + 1
        rounds.set(userId, round)
        if (round % 4 === 1) {
          const me = yield* Effect.promise(() =>
            fetch(`${config.apiUrl}/me`, { headers: { authorization: `Bearer ${Redacted.value(token)}` } }).then(
              async (response) => ({ status: response.status, body: await response.json().catch(() => null) })
            )
          )
          if (me.status === 200 && me.body?.id !== userId) {
            return yield* Effect.fail({ _tag: "WrongUser", message: `served ${me.body?.id}'s token to ${userId}` })
          }
        }
        return token
      })
    const callers = config.users.map((userId) => callerLoop(get, userId))
    emit({ event: "ready" })
    yield* Effect.forkScoped(Effect.all(callers, { concurrency: "unbounded", discard: true }))
    return yield* commands({
      signOut: (userId) =>
        Effect.runFork(
          Effect.match(users.signOut(userId), {
            onFailure: (error) => emit({ event: "signedOut", userId, error: error.message }),
            onSuccess: () => emit({ event: "signedOut", userId })
          })
        )
    })
  }
  const tokenCache =
    config.mode === "file"
      ? yield* TokenCache.file(config.path, fileOptions ?? {})
      : handWritten(config.path, config.mode === "handWritten")
  const provider = yield* AuthorizationCode.make({
    authUrl: config.authUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    skew: config.skew,
    tokenCache
  })
  const get = () => provider.getAccessToken
  emit({ event: "ready" })
  yield* Effect.forkScoped(
    Effect.all(
      Array.from({ length: config.callers }, () => callerLoop(get)),
      { concurrency: "unbounded", discard: true }
    )
  )
  return yield* commands({})
})

Effect.runPromise(
  program.pipe(
    Effect.scoped,
    Effect.provide(Layer.merge(Http, NodeFileSystem.layer)),
    Effect.catchAllCause((cause) => Effect.sync(() => process.stderr.write(`worker failed: ${cause}\n`)))
  )
).then(() => process.exit(0))
