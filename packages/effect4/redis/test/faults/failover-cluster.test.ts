/**
 * Redis Cluster failover (the Effect 3 line's suite, `failoverSuite.ts`) under a mixed fleet: two Effect 4 processes
 * and two Effect 3 processes, 20 users, rotating refresh tokens, a master SIGKILLed; and again with its replica
 * frozen and left behind just before (issue 28's lagging replica, every user on the killed master).
 */
import { describeFailover } from "../../../../redis/test/faults/support/failoverSuite.js"
import { startClusterFailover } from "../../../../redis/test/faults/support/topologies.js"
import { failoverWorkers } from "./support/workers.js"

const workers = [failoverWorkers.effect4, failoverWorkers.effect3]

describeFailover("Redis Cluster failover, mixed fleet", startClusterFailover, { workers })
describeFailover("Redis Cluster failover, replica lagging, mixed fleet", startClusterFailover, {
  laggingReplica: true,
  workers
})
