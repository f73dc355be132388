/**
 * Waits that scale with the machine's load: the tests run on 2 cores shared with other suites, where a process can
 * take many times longer to start than on a quiet machine. A wait only bounds a hang; it never speeds a test up.
 */
import { cpus, loadavg } from "node:os"

/** `base` ms on a quiet machine, up to 4 × `base` when the 1-minute load is several times the number of cores. */
export const scaled = (base: number): number =>
  Math.round(base * Math.min(4, Math.max(1, loadavg()[0]! / Math.max(1, cpus().length))))
