/**
 * The fault tests' world: a redis-server process of their own (stopped, restarted, paused at will), the emulator
 * over loopback, and a fleet of real OS processes (`faultWorker.mjs`) whose token requests, `invalid_grant`
 * answers, caller errors and longest calls are counted.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, it } from "vitest"
import { Emulator } from "@service-sdk/emulator"
import { Redis } from "ioredis"
import { scaled } from "../../support/load.js"
import { findRedisServer, freePort } from "../../support/redisServer.js"
import type { WorkerRunner } from "./failover.js"

/** The Effect 3 line's fault worker, on this process' Node. */
export const effect3FaultWorker: WorkerRunner = {
  node: process.execPath,
  script: fileURLToPath(new URL("./faultWorker.mjs", import.meta.url))
}

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Waits until `check` holds (polled every 50 ms), for at most `millis`; resolves to whether it did. */
export const until = async (check: () => boolean | Promise<boolean>, millis: number): Promise<boolean> => {
  const end = Date.now() + millis
  while (Date.now() < end) {
    if (await check()) return true
    await sleep(50)
  }
  return check()
}

/** Resolves when `child` has exited, or after `millis`. */
export const waitForExit = (child: ChildProcess, millis: number) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(resolve, millis)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
  })

/** A redis-server on a fixed port that can be stopped and started again (empty: no persistence). */
export class RedisProcess {
  private child: ChildProcess | undefined
  private adminClient: Redis | undefined
  private constructor(
    private readonly binary: string,
    readonly port: number
  ) {}

  static async start(binary: string): Promise<RedisProcess> {
    const redis = new RedisProcess(binary, await freePort())
    await redis.start()
    return redis
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** A client of the test's own (a new one after each start). */
  get admin(): Redis {
    if (this.adminClient === undefined) throw new Error("redis-server is not running")
    return this.adminClient
  }

  async start(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    this.child = spawn(this.binary, [...args, "--loglevel", "warning"], { stdio: "ignore" })
    const admin = new Redis({ host: "127.0.0.1", port: this.port, lazyConnect: true, maxRetriesPerRequest: 0 })
    admin.on("error", () => {})
    for (let attempt = 0; ; attempt++) {
      try {
        if (admin.status !== "wait") admin.disconnect()
        await admin.connect()
        if ((await admin.ping()) === "PONG") break
      } catch (error) {
        if (attempt > 100) throw new Error(`redis-server did not start on ${this.port}: ${String(error)}`)
        await sleep(100)
      }
    }
    this.adminClient = admin
  }

  /** Sends `signal` to the server (SIGSTOP freezes it with its connections open; SIGCONT resumes it). */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal)
  }

  async stop(): Promise<void> {
    this.adminClient?.disconnect()
    this.adminClient = undefined
    const child = this.child
    if (child === undefined) return
    child.kill("SIGKILL")
    await waitForExit(child, 5000)
    this.child = undefined
  }
}

export interface WorkerConfig {
  readonly redisUrl: string
  readonly key: string
  readonly authUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly grant: "client_credentials" | "authorization_code"
  readonly scope?: string
  readonly callers: number
  readonly pauseMs: number
  readonly skew: string
  readonly lockTtl?: string
  readonly commandTimeout?: string
  readonly hook?: "stop-after-response" | "kill-after-response"
}

export interface Report {
  readonly calls: number
  readonly errors: Readonly<Record<string, number>>
  readonly maxMs: number
  readonly tokens: ReadonlyArray<string>
}

/** One worker process and what it said. */
export class Worker {
  tokenRequests = 0
  invalidGrants = 0
  /** The hash of the token it received just before its hook fired. */
  hookToken: string | undefined
  private reports: Array<Report> = []
  private waiting: Array<(report: Report) => void> = []
  private stderr = ""

  private constructor(readonly child: ChildProcess) {}

  static start(config: WorkerConfig, runner: WorkerRunner = effect3FaultWorker): Promise<Worker> {
    const child = spawn(runner.node, [runner.script, JSON.stringify(config)], { stdio: ["pipe", "pipe", "pipe"] })
    const worker = new Worker(child)
    return new Promise((resolve, reject) => {
      let buffer = ""
      // a node process on the built packages starts in about a second; on a loaded machine it can take many times that
      const wait = scaled(30_000)
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`worker not ready within ${wait / 1000} s: ${worker.stderr}`))
      }, wait)
      child.stderr?.on("data", (chunk) => {
        worker.stderr += String(chunk)
      })
      child.once("exit", (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`worker exited (${code ?? signal}): ${worker.stderr}`))
      })
      child.stdout?.on("data", (chunk) => {
        buffer += String(chunk)
        let newline = buffer.indexOf("\n")
        while (newline >= 0) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + 1)
          newline = buffer.indexOf("\n")
          let event: { event: string } & Partial<Report> & { token?: string }
          try {
            event = JSON.parse(line)
          } catch {
            continue
          }
          if (event.event === "ready") {
            clearTimeout(timer)
            resolve(worker)
          } else if (event.event === "token-request") worker.tokenRequests++
          else if (event.event === "invalid_grant") worker.invalidGrants++
          else if (event.event === "hook") worker.hookToken = event.token
          else if (event.event === "report") {
            const report = event as unknown as Report
            const waiter = worker.waiting.shift()
            if (waiter !== undefined) waiter(report)
            else worker.reports.push(report)
          }
        }
      })
    })
  }

  get pid(): number {
    return this.child.pid!
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  send(command: "arm" | "disarm" | "report" | "stop"): void {
    if (this.alive) this.child.stdin?.write(`${command}\n`)
  }

  /** Counts since the last report. */
  report(): Promise<Report> {
    return new Promise((resolve, reject) => {
      const queued = this.reports.shift()
      if (queued !== undefined) return resolve(queued)
      const timer = setTimeout(() => reject(new Error(`no report within 10 s: ${this.stderr}`)), 10_000)
      this.waiting.push((report) => {
        clearTimeout(timer)
        resolve(report)
      })
      this.send("report")
    })
  }

  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal)
  }

  async stop(): Promise<void> {
    if (!this.alive) return
    this.child.kill("SIGCONT")
    this.child.stdin?.end("stop\n")
    await waitForExit(this.child, 5000)
    if (this.alive) {
      this.child.kill("SIGKILL")
      await waitForExit(this.child, 5000)
    }
  }
}

/** Several workers, and sums over them. */
export class Fleet {
  private constructor(readonly workers: ReadonlyArray<Worker>) {}

  /** One worker per config, the `runners` taken in turn (a mixed fleet when they are of both lines). */
  static async start(
    configs: ReadonlyArray<WorkerConfig>,
    runners: ReadonlyArray<WorkerRunner> = [effect3FaultWorker]
  ): Promise<Fleet> {
    const started = await Promise.allSettled(
      configs.map((config, index) => Worker.start(config, runners[index % runners.length]))
    )
    const workers = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []))
    const failed = started.find((result) => result.status === "rejected")
    if (failed !== undefined) {
      await Promise.all(workers.map((worker) => worker.stop()))
      throw failed.reason
    }
    return new Fleet(workers)
  }

  get invalidGrants(): number {
    return this.workers.reduce((sum, worker) => sum + worker.invalidGrants, 0)
  }

  /** Reports of the given workers (default: all live ones), merged. */
  async report(workers: ReadonlyArray<Worker> = this.workers.filter((worker) => worker.alive)): Promise<Report> {
    const reports = await Promise.all(workers.map((worker) => worker.report()))
    const errors: Record<string, number> = {}
    for (const report of reports) {
      for (const [tag, count] of Object.entries(report.errors)) errors[tag] = (errors[tag] ?? 0) + count
    }
    return {
      calls: reports.reduce((sum, report) => sum + report.calls, 0),
      errors,
      maxMs: Math.max(0, ...reports.map((report) => report.maxMs)),
      tokens: [...new Set(reports.flatMap((report) => report.tokens))]
    }
  }

  /** Arms every worker's hook; resolves to the first that fired it (the others are disarmed at once). */
  async armOne(millis = 8000): Promise<Worker> {
    for (const worker of this.workers) worker.send("arm")
    let fired: Worker | undefined
    await until(() => {
      fired = this.workers.find((worker) => worker.hookToken !== undefined)
      return fired !== undefined
    }, millis)
    for (const worker of this.workers) worker.send("disarm")
    if (fired === undefined) throw new Error(`no worker renewed within ${millis} ms`)
    return fired
  }

  stop(): Promise<void> {
    return Promise.all(this.workers.map((worker) => worker.stop())).then(() => undefined)
  }
}

/** A second registered client, for the tests with two clients on one key. */
export const otherClient = { clientId: "fleet-other-client", clientSecret: "fleet-other-secret" } as const

export interface World {
  readonly redis: RedisProcess
  readonly emulator: Awaited<ReturnType<typeof Emulator.start>>
}

/** `{ total, refresh_token, client_credentials }` token requests counted at the emulator. */
export const tokenRequests = async (world: World) => (await world.emulator.stats()).tokenRequests

/** A sign-in through the emulator's consent (auto-approved): the authorization code grant, as a web app does it. */
export const signIn = async (
  world: World,
  scope = "user-read-private"
): Promise<{ access_token: string; refresh_token: string; expires_in: number; scope?: string }> => {
  const redirectUri = "http://127.0.0.1:9/callback"
  const authorize = new URL(`${world.emulator.authUrl}/authorize`)
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: world.emulator.clientId,
    redirect_uri: redirectUri,
    scope,
    state: randomUUID()
  }).toString()
  const redirect = await fetch(authorize, { redirect: "manual" })
  const code = new URL(redirect.headers.get("location") ?? "").searchParams.get("code")
  if (code === null) throw new Error(`no code in the redirect (${redirect.status})`)
  const basic = Buffer.from(`${world.emulator.clientId}:${world.emulator.clientSecret}`).toString("base64")
  const response = await fetch(`${world.emulator.authUrl}/api/token`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri }).toString()
  })
  if (!response.ok) throw new Error(`the code exchange failed (${response.status})`)
  return (await response.json()) as never
}

/** A sign-in stored as the shared entry (what a web app's callback does through `exchangeCode`). */
export const storeSignIn = async (world: World, key: string, scope?: string): Promise<string> => {
  const tokens = await signIn(world, scope)
  await world.redis.admin.set(
    key,
    JSON.stringify({
      access_token: tokens.access_token,
      expires_at: Date.now() / 1000 + tokens.expires_in,
      issued_at: Date.now() / 1000,
      refresh_token: tokens.refresh_token,
      ...(tokens.scope === undefined ? {} : { scope: tokens.scope })
    })
  )
  return tokens.access_token
}

const binary = findRedisServer()
const required = process.env.SERVICE_SDK_REQUIRE_REDIS === "1"

/**
 * A suite with its own redis-server process and emulator. Without redis-server it is skipped with a warning, or,
 * when SERVICE_SDK_REQUIRE_REDIS=1, replaced by a failing test.
 */
export const describeFaults = (
  name: string,
  emulatorOptions: { readonly tokenLifetime: number; readonly rotateRefreshTokens?: boolean },
  body: (world: () => World) => void
): void => {
  if (binary === undefined) {
    const reason = "no redis-server ($SERVICE_SDK_REDIS_SERVER, on PATH or at /usr/bin/redis-server)"
    if (required) {
      describe(name, () => {
        it("needs redis-server because SERVICE_SDK_REQUIRE_REDIS=1", () => {
          throw new Error(`cannot run the Redis fault tests: ${reason}`)
        })
      })
      return
    }
    console.warn(`\n*** SKIPPING the Redis fault tests "${name}": ${reason}. ***\n`)
  }
  describe.skipIf(binary === undefined)(name, () => {
    let world: World | undefined
    beforeAll(async () => {
      const redis = await RedisProcess.start(binary!)
      const emulator = await Emulator.start({
        autoApprove: true,
        clients: [otherClient],
        tokenLifetime: emulatorOptions.tokenLifetime,
        rotateRefreshTokens: emulatorOptions.rotateRefreshTokens ?? false
      })
      world = { redis, emulator }
    })
    afterAll(async () => {
      await world?.emulator.close()
      await world?.redis.stop()
    })
    body(() => {
      if (world === undefined) throw new Error("the fault world is not running")
      return world
    })
  })
}

/** The common worker settings: 3 s tokens (emulator), skew 1 s, lock TTL 2 s, command timeout 1 s. */
export const workerConfig = (world: World, key: string, extra: Partial<WorkerConfig> = {}): WorkerConfig => ({
  redisUrl: world.redis.url,
  key,
  authUrl: world.emulator.authUrl,
  clientId: world.emulator.clientId,
  clientSecret: world.emulator.clientSecret,
  grant: "client_credentials",
  callers: 20,
  pauseMs: 50,
  skew: "1 second",
  lockTtl: "2 seconds",
  commandTimeout: "1 second",
  ...extra
})

export const uniqueKey = () => `faults:${randomUUID()}`
