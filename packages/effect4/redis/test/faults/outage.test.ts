/**
 * Redis itself under faults with a fleet of Effect 4 processes (the Effect 3 line's suite, `outageSuite.ts`): writes
 * paused (`CLIENT PAUSE 9000 WRITE`), and Redis stopped for 30 s then restarted empty.
 */
import { describeOutage } from "../../../../redis/test/faults/support/outageSuite.js"
import { faultWorkers } from "./support/workers.js"

describeOutage("Redis under faults (Effect 4 processes)", [faultWorkers.effect4])
