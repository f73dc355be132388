/**
 * Sentinel (1 master, 1 replica, 3 sentinels, `down-after-milliseconds` 1 s): the master SIGKILLed under a fleet with
 * rotating refresh tokens (issue 19), and again with its replica frozen just before (issue 28: the writes the master
 * acknowledged but never replicated must not cost a rotated refresh token).
 */
import { describeFailover } from "./support/failoverSuite.js"
import { startSentinelFailover } from "./support/topologies.js"

describeFailover("Redis Sentinel failover", startSentinelFailover)
describeFailover("Redis Sentinel failover, replica lagging", startSentinelFailover, { laggingReplica: true })
