/**
 * Sentinel (1 master, 1 replica, 3 sentinels, `down-after-milliseconds` 1 s): the master SIGKILLed under a fleet with
 * rotating refresh tokens (issue 19), and again with its replica frozen just before (issue 28: the writes the master
 * acknowledged but never replicated must not cost a rotated refresh token).
 */
import { Redis } from "ioredis"
import { fillReplicationLink, MASTER_NAME, sleep, startSentinelTopology, waitFor } from "../support/topology.js"
import { describeFailover, type Topology } from "./support/failoverSuite.js"

const start = async (): Promise<Topology | undefined> => {
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
        await fillReplicationLink(group.master, key)
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

describeFailover("Redis Sentinel failover", start)
describeFailover("Redis Sentinel failover, replica lagging", start, { laggingReplica: true })
