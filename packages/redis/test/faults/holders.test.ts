/**
 * A lock holder that stops or dies mid-renewal (issue tests 2, 3 and 6): a holder paused past its lock TTL
 * (SIGSTOP), one killed after the server rotated its refresh token (SIGKILL), and a FLUSHALL during a renewal.
 */
import { describeHolders } from "./support/holdersSuite.js"

describeHolders("lock holders under faults")
