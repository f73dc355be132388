// The line-free half of a failover worker process (failoverWorker.mjs here, and the Effect 4 line's in
// packages/effect4/redis/test/faults): its config, its ioredis client (the README's recipe), its counts, the check of
// every new token at /me, and its stdout events and stdin commands. Each line's worker adds its program.
import { createHash } from "node:crypto"
import { createInterface } from "node:readline"

const hash = (token) => createHash("sha256").update(token).digest("hex").slice(0, 12)
const millis = (text) => Number(String(text).split(" ")[0]) * (String(text).includes("second") ? 1000 : 1)

/** `ioredis`: the worker's own copy of the package (`{ Cluster, Redis }`). */
export const failoverProcess = ({ Cluster, Redis }) => {
  const config = JSON.parse(process.argv[2])
  const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`)

  // The README's client recipe: no offline queue (a command fails at once while the client is not connected; the
  // cache tries it again until its commandTimeout), ioredis' own timeout and retries within the cache's, no resending
  // of abandoned commands, reconnections every second at most.
  const commandTimeout = millis(config.commandTimeout)
  const client =
    config.topology.kind === "cluster"
      ? new Cluster(config.topology.nodes, {
          enableOfflineQueue: false,
          clusterRetryStrategy: (times) => Math.min(100 * times, 1000),
          redisOptions: {
            commandTimeout,
            maxRetriesPerRequest: 0,
            autoResendUnfulfilledCommands: false,
            connectTimeout: commandTimeout
          }
        })
      : new Redis({
          sentinels: config.topology.sentinels,
          name: config.topology.name,
          enableOfflineQueue: false,
          commandTimeout,
          maxRetriesPerRequest: 0,
          autoResendUnfulfilledCommands: false,
          connectTimeout: commandTimeout,
          retryStrategy: (times) => Math.min(100 * times, 1000),
          sentinelRetryStrategy: (times) => Math.min(100 * times, 1000),
          reconnectOnError: (error) => error.message.startsWith("READONLY")
        })
  client.on("error", () => {})

  const fresh = () => ({
    calls: 0,
    errors: {},
    messages: [],
    slow: [],
    maxMs: 0,
    maxAt: 0,
    wrongUser: 0,
    verified: 0,
    unverified: 0,
    invalidGrants: 0
  })
  let stats = fresh()
  let running = true
  const seen = new Map(config.users.map((user) => [user, new Set()]))
  /** Checks at /me still under way: the last report waits for them (a starved process sends them late). */
  const checking = new Set()

  /** The owner of a token, as the data API sees it (off the caller's path). */
  const verify = async (userId, token) => {
    try {
      const response = await fetch(`${config.apiUrl}/me`, { headers: { authorization: `Bearer ${token}` } })
      if (response.status !== 200) {
        stats.unverified++
        return
      }
      const me = await response.json()
      if (me.id === userId) stats.verified++
      else {
        stats.wrongUser++
        process.stderr.write(`wrong user: ${userId} was served a token of ${me.id}\n`)
      }
    } catch {
      stats.unverified++
    }
  }

  const report = () => {
    const { maxMs, ...rest } = stats
    stats = fresh()
    emit({ event: "report", ...rest, maxMs: Math.round(maxMs) })
  }

  return {
    config,
    client,
    running: () => running,
    /** To say once the callers are about to start. */
    ready: () => emit({ event: "ready" }),
    /** A token endpoint's 400 answer's body: an `invalid_grant` (a rotated-out refresh token presented) is counted. */
    tokenError: (body) => {
      if (body?.error === "invalid_grant") stats.invalidGrants++
    },
    /** One call of `userId`'s getAccessToken that began at `started`: its error (`_tag`, `message`) or its token. */
    record: (userId, started, error, token) => {
      const took = performance.now() - started
      stats.calls++
      if (took > stats.maxMs) {
        stats.maxMs = took
        stats.maxAt = Date.now()
      }
      if (took > 1000 && stats.slow.length < 5) stats.slow.push({ ms: Math.round(took), at: Date.now(), userId })
      if (error !== undefined) {
        stats.errors[error._tag] = (stats.errors[error._tag] ?? 0) + 1
        // error messages never hold a token (the SDK's contract): a few, for the test's log
        const text = `${error._tag}: ${error.message}`.slice(0, 300)
        if (stats.messages.length < 3 && !stats.messages.includes(text)) stats.messages.push(text)
        return
      }
      const tokens = seen.get(userId)
      if (!tokens.has(hash(token))) {
        tokens.add(hash(token))
        const check = verify(userId, token)
        checking.add(check)
        void check.finally(() => checking.delete(check))
      }
    },
    /** Answers the commands, runs the callers (`program`, a Promise) until "stop", then a last report. */
    run: (program) => {
      createInterface({ input: process.stdin }).on("line", (line) => {
        if (line === "report") report()
        else if (line === "stop") running = false
      })
      program.then(
        async () => {
          // the last checks of new tokens (bounded: a fetch under a CPU quota is slow, not endless), then the last report
          await Promise.race([Promise.all(checking), new Promise((resolve) => setTimeout(resolve, 5000))])
          report()
          client.disconnect()
          process.exit(0)
        },
        (error) => {
          process.stderr.write(`${String(error)}\n`)
          process.exit(1)
        }
      )
    }
  }
}
