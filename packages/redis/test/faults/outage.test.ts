/**
 * Redis itself under faults (issue tests 4 and 5): writes paused (`CLIENT PAUSE 9000 WRITE`), and Redis stopped for
 * 30 s then restarted empty.
 */
import { describeOutage } from "./support/outageSuite.js"

describeOutage("Redis under faults")
