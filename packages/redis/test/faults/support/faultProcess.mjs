// The line-free half of a fault worker process (faultWorker.mjs here, and the Effect 4 line's in
// packages/effect4/redis/test/faults): its config, its counts, the hook, and its stdout events and stdin commands
// (see faultWorker.mjs). Each line's worker adds its program and the HTTP client that reports to it.
import { createHash } from "node:crypto"
import { createInterface } from "node:readline"

const hash = (token) => createHash("sha256").update(token).digest("hex").slice(0, 12)
const isTokenCall = (url) => url.endsWith("/api/token")

export const faultProcess = () => {
  const config = JSON.parse(process.argv[2])
  const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`)
  let armed = false
  const fresh = () => ({ calls: 0, errors: {}, maxMs: 0, tokens: new Set() })
  let stats = fresh()
  let running = true

  const report = () => {
    const { calls, errors, maxMs, tokens } = stats
    stats = fresh()
    emit({ event: "report", calls, errors, maxMs: Math.round(maxMs), tokens: [...tokens] })
  }

  return {
    config,
    running: () => running,
    /** To say once the callers are about to start. */
    ready: () => emit({ event: "ready" }),
    /** A request to `url` went out. */
    request: (url) => {
      if (isTokenCall(url)) emit({ event: "token-request" })
    },
    /** Whether the answer of `url` with `status` is to be shown to `tokenAnswer` (with its JSON body). */
    wantsBody: (url, status) => isTokenCall(url) && (status === 400 || (status === 200 && armed)),
    /** A token endpoint's answer: an `invalid_grant` is reported; an armed hook fires at a token. */
    tokenAnswer: (status, body) => {
      if (status === 400 && body?.error === "invalid_grant") emit({ event: "invalid_grant" })
      if (status === 200 && armed) {
        armed = false
        emit({ event: "hook", token: hash(String(body?.access_token)) })
        // the token arrived (and the server rotated the refresh token) but is not stored yet
        process.kill(process.pid, config.hook === "kill-after-response" ? "SIGKILL" : "SIGSTOP")
      }
    },
    /** One call of getAccessToken that began at `started`: its error's tag, or the token. */
    record: (started, errorTag, token) => {
      stats.calls += 1
      stats.maxMs = Math.max(stats.maxMs, performance.now() - started)
      if (errorTag !== undefined) stats.errors[errorTag] = (stats.errors[errorTag] ?? 0) + 1
      else stats.tokens.add(hash(token))
    },
    /** Answers the commands while the callers (`program`, a Promise) run. */
    run: (program) => {
      createInterface({ input: process.stdin }).on("line", (line) => {
        if (line === "arm") armed = true
        else if (line === "disarm") armed = false
        else if (line === "report") report()
        else if (line === "stop") {
          running = false
          report()
          process.exit(0)
        }
      })
      program.catch((error) => {
        process.stderr.write(`${String(error)}\n`)
        process.exit(1)
      })
    }
  }
}
