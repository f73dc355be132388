/**
 * The failover suites' topologies (`failoverSuite.ts`'s `Topology`): Redis Cluster (3 masters + 3 replicas,
 * `cluster-node-timeout` 1 s; every script touches one key, so no hash tags are needed and no CROSSSLOT can happen)
 * and Sentinel (1 master, 1 replica, 3 sentinels, `down-after-milliseconds` 1 s). Shared by both lines' suites.
 */
import { Cluster, Redis } from "ioredis"
import {
  fillReplicationLink,
  MASTER_NAME,
  type Node,
  sleep,
  startCluster,
  startSentinelTopology,
  waitFor
} from "../../support/topology.js"
import type { Topology } from "./failoverSuite.js"

/**
 * The two ways a replica falls behind, one after the other (the replica frozen already): for the first half of
 * `ms`, the link filled (`fillReplicationLink`): the master still counts the replica, which confirms nothing; then
 * the link cut (`CLIENT KILL TYPE replica`, issue 44): the master counts no replica at all. Writes of both halves are
 * acknowledged by the master only, and die with it.
 */
const lagThenCut = async (master: Node, key: string, ms: number): Promise<void> => {
  const start = Date.now()
  await fillReplicationLink(master, key)
  await sleep(ms / 2 - (Date.now() - start))
  await master.admin.call("CLIENT", "KILL", "TYPE", "replica")
}

export const startClusterFailover = async (): Promise<Topology | undefined> => {
  const cluster = await startCluster()
  if (cluster === undefined) return undefined
  const admin = (nodes = cluster.startupNodes) => {
    const client = new Cluster([...nodes], { clusterRetryStrategy: (times) => Math.min(100 * times, 1000) })
    client.on("error", () => {})
    return client
  }
  return {
    config: { kind: "cluster", nodes: cluster.startupNodes },
    write: async (entries) => {
      const client = admin()
      try {
        for (const { entry, key } of entries) await client.set(key, entry)
      } finally {
        client.disconnect()
      }
    },
    read: async (keys) => {
      const live = cluster.nodes.filter((node) => node.alive).map((node) => ({ host: "127.0.0.1", port: node.port }))
      const client = admin(live)
      try {
        return await Promise.all(keys.map((key) => client.get(key)))
      } finally {
        client.disconnect()
      }
    },
    killMaster: async (key, lag) => {
      const port = await cluster.masterOf(key)
      const master = cluster.nodes.find((node) => node.port === port)!
      const replica = lag === undefined ? undefined : await cluster.replicaOf(port)
      if (lag !== undefined && replica !== undefined) {
        replica.kill("SIGSTOP")
        const frozenAt = Date.now()
        await lagThenCut(master, key, lag.ms)
        await sleep(lag.ms - (Date.now() - frozenAt))
        await lag.beforeKill()
      }
      const killedAt = Date.now()
      master.kill("SIGKILL")
      replica?.kill("SIGCONT")
      await cluster.awaitHealthy(key, 60_000)
      return { killedAt, recoveredAt: Date.now() }
    },
    stop: cluster.stop
  }
}

export const startSentinelFailover = async (): Promise<Topology | undefined> => {
  const group = await startSentinelTopology()
  if (group === undefined) return undefined
  const admin = () => {
    const client = new Redis({
      sentinels: [...group.sentinels],
      name: MASTER_NAME,
      sentinelRetryStrategy: (times) => Math.min(100 * times, 1000)
    })
    client.on("error", () => {})
    return client
  }
  return {
    config: { kind: "sentinel", sentinels: group.sentinels, name: MASTER_NAME },
    write: async (entries) => {
      const client = admin()
      try {
        for (const { entry, key } of entries) await client.set(key, entry)
        // on the replica too before the run: the failover must not lose the sign-ins themselves
        await client.call("WAIT", "1", "5000")
      } finally {
        client.disconnect()
      }
    },
    read: async (keys) => {
      const client = admin()
      try {
        return await Promise.all(keys.map((key) => client.get(key)))
      } finally {
        client.disconnect()
      }
    },
    killMaster: async (key, lag) => {
      if (lag !== undefined) {
        group.replica.kill("SIGSTOP")
        const frozenAt = Date.now()
        await lagThenCut(group.master, key, lag.ms)
        await sleep(lag.ms - (Date.now() - frozenAt))
        await lag.beforeKill()
      }
      const killedAt = Date.now()
      group.master.kill("SIGKILL")
      if (lag !== undefined) group.replica.kill("SIGCONT")
      await waitFor(
        "the sentinels promoting the replica",
        async () =>
          (await group.masterPort()) === group.replica.port &&
          String(await group.replica.admin.call("ROLE")).startsWith("master"),
        60_000
      )
      return { killedAt, recoveredAt: Date.now() }
    },
    stop: group.stop
  }
}
