/**
 * Lock holders of the Effect 4 line under faults (the Effect 3 line's suite, `holdersSuite.ts`, with a fleet of
 * Effect 4 processes): a holder paused past its lock TTL (SIGSTOP), one SIGKILLed after the server rotated its
 * refresh token, and a FLUSHALL during a renewal.
 */
import { describeHolders } from "../../../../redis/test/faults/support/holdersSuite.js"
import { faultWorkers } from "./support/workers.js"

describeHolders("lock holders under faults (Effect 4 processes)", [faultWorkers.effect4])
