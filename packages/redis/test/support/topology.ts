/**
 * Redis topologies for the failover tests, made of real server processes on 127.0.0.1 (ports chosen free): a Redis
 * Cluster of 3 masters and 3 replicas, and a Sentinel group of 1 master, 1 replica and 3 sentinels. The binary is
 * the tests' redis-server ($SERVICE_SDK_REDIS_SERVER may point at valkey-server: both take the same options, and
 * `<binary> <conf> --sentinel` runs a sentinel). Timings are short (node timeout and down-after 1 s), so a master
 * SIGKILLed fails over in a few seconds. Every wait polls until done and scales with a loaded machine.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redis } from "ioredis"
import { findRedisServer, freeClusterPort, freePort } from "./redisServer.js"

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Polls `check` every 100 ms until it holds; throws `what` after `millis`. */
export const waitFor = async (what: string, check: () => Promise<boolean>, millis: number): Promise<void> => {
  const end = Date.now() + millis
  let last: unknown
  while (Date.now() < end) {
    try {
      if (await check()) return
    } catch (error) {
      last = error
    }
    await sleep(100)
  }
  throw new Error(`${what}: not within ${millis / 1000} s${last === undefined ? "" : ` (${String(last)})`}`)
}

/** One server or sentinel process, and a client of the test's own for it. */
export class Node {
  private constructor(
    readonly port: number,
    readonly child: ChildProcess,
    readonly admin: Redis,
    private output: { text: string }
  ) {}

  static async start(binary: string, port: number, args: ReadonlyArray<string>): Promise<Node> {
    const child = spawn(binary, [...args], { stdio: ["ignore", "pipe", "pipe"] })
    const output = { text: "" }
    const keep = (chunk: unknown) => {
      output.text = (output.text + String(chunk)).slice(-4000)
    }
    child.stdout?.on("data", keep)
    child.stderr?.on("data", keep)
    const admin = new Redis({
      host: "127.0.0.1",
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 200
    })
    admin.on("error", () => {})
    const node = new Node(port, child, admin, output)
    try {
      await waitFor(
        `${binary} on port ${port}`,
        async () => {
          if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}): ${output.text}`)
          if (admin.status === "wait") await admin.connect()
          return (await admin.ping()) === "PONG"
        },
        30_000
      )
    } catch (error) {
      node.kill()
      throw error
    }
    return node
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  get log(): string {
    return this.output.text
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    if (signal === "SIGKILL") this.admin.disconnect()
    if (this.alive) this.child.kill(signal)
  }

  async stop(): Promise<void> {
    this.admin.disconnect()
    if (!this.alive) return
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()))
    this.child.kill("SIGKILL")
    await Promise.race([exited, sleep(5000)])
  }
}

const common = (dir: string, port: number) => [
  "--port",
  String(port),
  "--bind",
  "127.0.0.1",
  "--dir",
  dir,
  "--save",
  "",
  "--appendonly",
  "no",
  "--loglevel",
  "warning"
]

/**
 * Makes the replica of a master lag for real, as a replica behind on a busy master does: with the replica frozen
 * (SIGSTOP), a 32 MB write to the master (in `key`'s slot) fills the replication link (the frozen replica's socket
 * buffer and the master's), so what the master acknowledges after it stays in the master's memory and dies with it.
 * (A frozen replica alone loses nothing: its kernel keeps what the master sent, and it reads it when resumed.)
 */
export const fillReplicationLink = async (master: Node, key: string): Promise<void> => {
  // in `key`'s slot: its own hash tag when it has one, else all of it as the tag
  const tagged = /\{[^}]+\}/.test(key) ? key : `{${key}}`
  await master.admin.set(`${tagged}:replication-ballast`, "x".repeat(32 * 1024 * 1024))
}

/** Lines of `INFO <section>` as a record. */
export const info = async (client: Redis, section: string): Promise<Record<string, string>> =>
  Object.fromEntries(
    String(await client.info(section))
      .split(/\r?\n/)
      .filter((line) => line.includes(":"))
      .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1)])
  )

export interface ClusterTopology {
  /** Every node, masters first (node i < 3 serves a third of the slots; node i + 3 is its replica). */
  readonly nodes: ReadonlyArray<Node>
  /** The startup nodes a client is given. */
  readonly startupNodes: ReadonlyArray<{ readonly host: string; readonly port: number }>
  /** The port of the master serving `key` now, as a live node sees it. */
  readonly masterOf: (key: string) => Promise<number>
  /** The live replica of the master on `port`. */
  readonly replicaOf: (port: number) => Promise<Node>
  /** Resolves once every live node reports `cluster_state:ok` and `key`'s slot has a live master. */
  readonly awaitHealthy: (key: string, millis: number) => Promise<void>
  readonly stop: () => Promise<void>
}

const SLOTS: ReadonlyArray<readonly [number, number]> = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383]
]

/** A Redis Cluster of 3 masters and 3 replicas, or undefined without redis-server. */
export const startCluster = async (): Promise<ClusterTopology | undefined> => {
  const binary = findRedisServer()
  if (binary === undefined) return undefined
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-cluster-"))
  const nodes: Array<Node> = []
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const ports: Array<number> = []
    while (ports.length < 6) {
      // a cluster node also listens on port + 10000 (its bus): both below the ephemeral range
      const port = await freeClusterPort()
      if (!ports.includes(port) && !ports.includes(port + 10_000) && !ports.includes(port - 10_000)) ports.push(port)
    }
    nodes.push(
      ...(await Promise.all(
        ports.map((port) =>
          Node.start(binary, port, [
            ...common(dir, port),
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            `nodes-${port}.conf`,
            "--cluster-node-timeout",
            "1000",
            // a replica always takes over, however long it was cut off (the tests' failovers are short anyway)
            "--cluster-replica-validity-factor",
            "0"
          ])
        )
      ))
    )
    const [first, ...others] = nodes
    for (const node of others) await first!.admin.call("CLUSTER", "MEET", "127.0.0.1", String(node.port))
    for (const [index, [from, to]] of SLOTS.entries()) {
      await nodes[index]!.admin.call("CLUSTER", "ADDSLOTSRANGE", String(from), String(to))
    }
    const ids = await Promise.all(nodes.map(async (node) => String(await node.admin.call("CLUSTER", "MYID"))))
    await waitFor(
      "the cluster nodes meeting",
      async () => {
        for (const node of nodes) {
          const known = String(await node.admin.call("CLUSTER", "NODES"))
            .trim()
            .split("\n")
          if (known.length < 6) return false
        }
        return true
      },
      30_000
    )
    for (let replica = 3; replica < 6; replica++) {
      await waitFor(
        `replica ${replica} following its master`,
        async () => {
          await nodes[replica]!.admin.call("CLUSTER", "REPLICATE", ids[replica - 3]!)
          return true
        },
        30_000
      )
    }
    await waitFor(
      "the cluster ready (state ok, replicas in sync)",
      async () => {
        for (const node of nodes) {
          if ((await info(node.admin, "cluster")).cluster_enabled !== "1") return false
          const state = String(await node.admin.call("CLUSTER", "INFO"))
          if (!state.includes("cluster_state:ok")) return false
        }
        for (let replica = 3; replica < 6; replica++) {
          if ((await info(nodes[replica]!.admin, "replication")).master_link_status !== "up") return false
        }
        return true
      },
      60_000
    )
  } catch (error) {
    await stop()
    throw error
  }
  const live = () => nodes.filter((node) => node.alive)
  const masterOf = async (key: string) => {
    for (const node of live()) {
      try {
        const slot = Number(await node.admin.call("CLUSTER", "KEYSLOT", key))
        const ranges = (await node.admin.call("CLUSTER", "SLOTS")) as Array<[number, number, [string, number]]>
        const range = ranges.find(([from, to]) => slot >= from && slot <= to)
        if (range !== undefined) return Number(range[2][1])
      } catch {
        // that node is not answering yet: ask another
      }
    }
    throw new Error(`no live node knows the master of ${key}`)
  }
  const replicaOf = async (port: number) => {
    for (const node of live()) {
      const replication = await info(node.admin, "replication")
      if (replication.role === "slave" && Number(replication.master_port) === port) return node
    }
    throw new Error(`no live replica of the master on port ${port}`)
  }
  const awaitHealthy = (key: string, millis: number) =>
    waitFor(
      "the cluster healthy again",
      async () => {
        for (const node of live()) {
          if (!String(await node.admin.call("CLUSTER", "INFO")).includes("cluster_state:ok")) return false
        }
        const master = await masterOf(key)
        return live().some((node) => node.port === master)
      },
      millis
    )
  return {
    nodes,
    startupNodes: nodes.map((node) => ({ host: "127.0.0.1", port: node.port })),
    masterOf,
    replicaOf,
    awaitHealthy,
    stop
  }
}

export interface SentinelGroup {
  readonly sentinels: ReadonlyArray<{ readonly host: string; readonly port: number }>
  readonly nodes: ReadonlyArray<Node>
  readonly stop: () => Promise<void>
}

export const MASTER_NAME = "service-sdk-master"

/** `count` sentinels watching the master on `masterPort` as {@link MASTER_NAME} (quorum 2, or 1 for one sentinel). */
export const startSentinels = async (
  masterPort: number,
  count: number,
  dir = mkdtempSync(join(tmpdir(), "service-sdk-sentinel-"))
): Promise<SentinelGroup | undefined> => {
  const binary = findRedisServer()
  if (binary === undefined) return undefined
  const nodes: Array<Node> = []
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (let index = 0; index < count; index++) {
      const port = await freePort()
      const conf = join(dir, `sentinel-${port}.conf`)
      writeFileSync(
        conf,
        [
          `port ${port}`,
          "bind 127.0.0.1",
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} ${Math.min(2, count)}`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
          `sentinel failover-timeout ${MASTER_NAME} 4000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          ""
        ].join("\n")
      )
      nodes.push(await Node.start(binary, port, [conf, "--sentinel", "--loglevel", "warning"]))
    }
  } catch (error) {
    await stop()
    throw error
  }
  return { sentinels: nodes.map((node) => ({ host: "127.0.0.1", port: node.port })), nodes, stop }
}

export interface SentinelTopology extends SentinelGroup {
  readonly master: Node
  readonly replica: Node
  /** The port the sentinels name as the master now. */
  readonly masterPort: () => Promise<number>
}

/** A master and its replica, in sync, pushed onto `servers` (so a failure midway still stops what started). */
const startPair = async (binary: string, dir: string, servers: Array<Node>): Promise<void> => {
  const masterPort = await freePort()
  servers.push(await Node.start(binary, masterPort, common(dir, masterPort)))
  const replicaPort = await freePort()
  servers.push(
    await Node.start(binary, replicaPort, [
      ...common(dir, replicaPort),
      "--replicaof",
      "127.0.0.1",
      String(masterPort),
      "--dbfilename",
      `replica-${replicaPort}.rdb`
    ])
  )
  await waitFor(
    "the replica in sync",
    async () => (await info(servers[1]!.admin, "replication")).master_link_status === "up",
    30_000
  )
}

/** A master and one replica (no sentinel), or undefined without redis-server. */
export const startReplicatedPair = async (): Promise<
  { readonly master: Node; readonly replica: Node; readonly stop: () => Promise<void> } | undefined
> => {
  const binary = findRedisServer()
  if (binary === undefined) return undefined
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-pair-"))
  const servers: Array<Node> = []
  const stop = async () => {
    await Promise.all(servers.map((node) => node.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await startPair(binary, dir, servers)
  } catch (error) {
    await stop()
    throw error
  }
  return { master: servers[0]!, replica: servers[1]!, stop }
}

/** 1 master, 1 replica and 3 sentinels that know each other, or undefined without redis-server. */
export const startSentinelTopology = async (): Promise<SentinelTopology | undefined> => {
  const binary = findRedisServer()
  if (binary === undefined) return undefined
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-sentinel-"))
  const servers: Array<Node> = []
  let group: SentinelGroup | undefined
  const stop = async () => {
    await group?.stop()
    await Promise.all(servers.map((node) => node.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await startPair(binary, dir, servers)
    const masterPort = servers[0]!.port
    group = await startSentinels(masterPort, 3, dir)
    await waitFor(
      "the sentinels knowing each other and the replica",
      async () => {
        for (const sentinel of group!.nodes) {
          const others = (await sentinel.admin.call("SENTINEL", "SENTINELS", MASTER_NAME)) as Array<unknown>
          const replicas = (await sentinel.admin.call("SENTINEL", "REPLICAS", MASTER_NAME)) as Array<unknown>
          if (others.length < 2 || replicas.length < 1) return false
        }
        return true
      },
      60_000
    )
  } catch (error) {
    await stop()
    throw error
  }
  const masterPort = async () => {
    for (const sentinel of group!.nodes) {
      try {
        const reply = (await sentinel.admin.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as [
          string,
          string
        ]
        return Number(reply[1])
      } catch {
        // ask the next one
      }
    }
    throw new Error("no sentinel answers")
  }
  return {
    ...group!,
    master: servers[0]!,
    replica: servers[1]!,
    masterPort,
    stop
  }
}
