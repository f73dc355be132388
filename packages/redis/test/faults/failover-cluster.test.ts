/**
 * Redis Cluster (3 masters + 3 replicas, `cluster-node-timeout` 1 s): a master SIGKILLed under a fleet with rotating
 * refresh tokens (issue 19). Every script touches one key, so no hash tags are needed and no CROSSSLOT can happen.
 */
import { describeFailover } from "./support/failoverSuite.js"
import { startClusterFailover } from "./support/topologies.js"

describeFailover("Redis Cluster failover", startClusterFailover)
describeFailover("Redis Cluster failover, replica lagging", startClusterFailover, { laggingReplica: true })
