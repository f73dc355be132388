/**
 * A fleet starved of CPU (issue 42 item 19), on Redis Cluster with a mixed fleet: the lagging-replica failover of
 * `failover-cluster.test.ts` with two Effect 4 and two Effect 3 worker processes under a CPU quota of 40 % of one CPU
 * between them (`cpuQuota.ts` of the Effect 3 line's suites). Nobody is signed out.
 */
import { describeFailover } from "../../../../redis/test/faults/support/failoverSuite.js"
import { startClusterFailover } from "../../../../redis/test/faults/support/topologies.js"
import { failoverWorkers } from "./support/workers.js"

describeFailover("Redis Cluster failover, replica lagging, mixed fleet, CPU quota", startClusterFailover, {
  laggingReplica: true,
  workers: [failoverWorkers.effect4, failoverWorkers.effect3],
  cpuQuota: 40
})
