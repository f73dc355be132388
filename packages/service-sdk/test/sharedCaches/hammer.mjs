// The SIGKILL hammer of the file lock and compare-and-set (issue 28), runnable on its own:
//   node packages/service-sdk/test/sharedCaches/hammer.mjs --processes 8 --kills 50
// (with `--worker <e3 worker>,<e4 worker>` the workers alternate between the scripts: the Effect 4 line's
// mixedHammer test mixes both lines on one file)
// `processes` workers (lockWorker.mjs, mode "hammer") increment a counter in one token file, each increment a
// compare-and-set under the lock; one at random is SIGKILLed every 80-300 ms and replaced, `kills` times. At the end
// every worker is killed and one more process takes the lock once (it sweeps what the kills left). With `--stops N`
// (and a short `--lock-ttl`), N workers are also paused (SIGSTOP) past the lock's TTL and resumed. Prints one JSON
// line: overlaps (a worker entered the lock while another live, unpaused worker was inside; pausedOverlaps counts
// the entries while only a paused holder was inside, which a TTL allows), lost updates (an increment
// logged twice, or the file's counter below the highest logged one), leftovers (files beside the entry), copies of a
// refresh token among them, and the counts.
import { spawn } from "node:child_process"
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bundle } from "./bundle.mjs"

const arg = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`)
  return index > 0 ? process.argv[index + 1] : fallback
}
const processes = Number(arg("processes", "8"))
const kills = Number(arg("kills", "50"))
// paused holders: a worker SIGSTOPped past the lock's TTL, then SIGCONTinued (its lock is taken over meanwhile)
const stops = Number(arg("stops", "0"))
const lockTtl = arg("lock-ttl", "5 seconds")
const stopMs = Number(arg("stop-ms", "1500"))
const sleep = (millis) => new Promise((resolve) => setTimeout(resolve, millis))

// `--worker a.mjs,b.mjs`: workers of several scripts (e.g. both Effect lines), started in turn
const workers = (arg("worker", undefined) ?? bundle("lockWorker")).split(",")
const dir = mkdtempSync(join(tmpdir(), "hammer-"))
const path = join(dir, "tokens.json")
const log = join(mkdtempSync(join(tmpdir(), "hammer-log-")), "log")
appendFileSync(log, "")
const errors = []
const live = new Map()
let made = 0

const run = (mode) => {
  const name = `w${made}`
  const child = spawn(
    process.execPath,
    [workers[made % workers.length], JSON.stringify({ mode, name, path, log, lockTtl, lockWait: "120 seconds" })],
    { stdio: ["ignore", "ignore", "pipe"] }
  )
  let stderr = ""
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk)
  })
  const exited = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(name)
      if (signal === null && code !== 0) errors.push(`${name} exited ${code}: ${stderr.slice(0, 300)}`)
      resolve()
    })
  )
  made++
  live.set(name, { child, exited })
  return { name, child, exited }
}

const kill = async (name) => {
  const entry = live.get(name)
  if (entry === undefined) return
  appendFileSync(log, `killsent ${name}\n`)
  entry.child.kill("SIGKILL")
  await entry.exited
}

const lines = () =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "")
const started = Date.now()
for (let i = 0; i < processes; i++) run("hammer")
// until every worker has made some progress (start-up takes a while on a busy machine)
const until = Date.now() + 120_000
while (lines().filter((line) => line.startsWith("inc ")).length < processes && Date.now() < until) await sleep(50)
for (let k = 0; k < kills; k++) {
  await sleep(80 + Math.floor(Math.random() * 220))
  const names = [...live.keys()]
  await kill(names[Math.floor(Math.random() * names.length)])
  run("hammer")
}
for (let k = 0; k < stops; k++) {
  await sleep(80 + Math.floor(Math.random() * 220))
  const names = [...live.keys()]
  const name = names[Math.floor(Math.random() * names.length)]
  appendFileSync(log, `stopsent ${name}\n`)
  live.get(name)?.child.kill("SIGSTOP")
  await sleep(stopMs)
  live.get(name)?.child.kill("SIGCONT")
}
await sleep(300)
await Promise.all([...live.keys()].map(kill))
const sweeper = run("sweep")
await sweeper.exited

// the log, in the order the lines were appended
let overlaps = 0
let pausedOverlaps = 0
let holds = 0
const inside = new Set()
const paused = new Set()
const dead = new Set()
const increments = []
for (const line of lines()) {
  const [event, value] = line.split(" ")
  if (event === "killsent") {
    dead.add(value)
    inside.delete(value)
  } else if (event === "stopsent") {
    if (inside.has(value)) paused.add(value)
  } else if (dead.has(value)) {
    // a line a worker wrote as it was being killed: it holds nothing any more
  } else if (event === "enter") {
    holds++
    // a holder paused past the lock's TTL loses the lock by design: the compare-and-set refuses its write
    if ([...inside].some((other) => !paused.has(other))) overlaps++
    else if (inside.size > 0) pausedOverlaps++
    inside.add(value)
  } else if (event === "exit") {
    inside.delete(value)
    paused.delete(value)
  } else if (event === "inc") increments.push(Number(value))
}
const final = Number(JSON.parse(readFileSync(path, "utf8")).access_token.slice("count-".length))
const highest = Math.max(0, ...increments)
const lostUpdates = increments.length - new Set(increments).size + Math.max(0, highest - final)
const leftovers = readdirSync(dir).filter((name) => name !== "tokens.json")
const canaryCopies = readdirSync(dir, { recursive: true }).filter((name) => {
  if (name === "tokens.json") return false
  try {
    return statSync(join(dir, name)).isFile() && readFileSync(join(dir, name), "utf8").includes("CANARY")
  } catch {
    return false
  }
})
process.stdout.write(
  `${JSON.stringify({
    processes,
    kills,
    stops,
    lockTtl,
    holds,
    increments: increments.length,
    final,
    overlaps,
    pausedOverlaps,
    lostUpdates,
    leftovers,
    canaryCopies,
    workerErrors: errors,
    seconds: Math.round((Date.now() - started) / 100) / 10
  })}\n`
)
