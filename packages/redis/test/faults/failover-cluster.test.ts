/**
 * Redis Cluster (3 masters + 3 replicas, `cluster-node-timeout` 1 s): a master SIGKILLed under a fleet with rotating
 * refresh tokens (issue 19). Every script touches one key, so no hash tags are needed and no CROSSSLOT can happen.
 */
import { Cluster } from "ioredis"
import { fillReplicationLink, sleep, startCluster } from "../support/topology.js"
import { describeFailover, type Topology } from "./support/failoverSuite.js"

const start = async (): Promise<Topology | undefined> => {
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
        await fillReplicationLink(master, key)
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

describeFailover("Redis Cluster failover", start)
describeFailover("Redis Cluster failover, replica lagging", start, { laggingReplica: true })
