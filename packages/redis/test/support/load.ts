/**
 * Waits and slack that scale with the machine's load: the tests run on 2 cores shared with other suites, where a
 * process can take many times longer to start, or a call to be scheduled, than on a quiet machine. Only the slack in
 * a bound scales (a token request, scheduling); the contract's part of it (a lock TTL, a command timeout) does not.
 */
import { cpus, loadavg } from "node:os"

/** `base` ms on a quiet machine, up to 8 × `base` when the 1-minute load is many times the number of cores. */
export const scaled = (base: number): number =>
  Math.round(base * Math.min(8, Math.max(1, loadavg()[0]! / Math.max(1, cpus().length))))
