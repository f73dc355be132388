/**
 * A fleet starved of CPU (issue 42 item 19): the Sentinel lagging-replica failover (`failover-sentinel.test.ts`) with
 * the 4 worker processes under a CPU quota of 40 % of one CPU between them (a cgroup, or nice beside busy loops; see
 * `support/cpuQuota.ts`). Calls are slow, holders too; a holder slow but alive keeps its lock while it renews, and
 * nobody is signed out.
 */
import { describeFailover } from "./support/failoverSuite.js"
import { startSentinelFailover } from "./support/topologies.js"

describeFailover("Redis Sentinel failover, replica lagging, CPU quota", startSentinelFailover, {
  laggingReplica: true,
  cpuQuota: 40
})
