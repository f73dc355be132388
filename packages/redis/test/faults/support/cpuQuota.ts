/**
 * Processes under a CPU quota, for the fleet-under-overload tests (issue 42 item 19): a cgroup with `cpu.max`
 * (cgroup v2) or `cpu.cfs_quota_us` (cgroup v1) when this process may make one (root, a writable cgroup file
 * system), else the processes reniced to 19 beside busy loops on every core. Either way the workers get a small,
 * deliberate share of the CPU, not whatever a loaded machine leaves them.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"

export interface CpuQuota {
  /** How the quota is enforced, for the test's log. */
  readonly how: string
  /** Puts a process under the quota. */
  readonly add: (pid: number) => void
  /** Lifts the quota (processes still in the cgroup go back to the parent) and stops any busy loop. */
  readonly stop: () => void
}

const PERIOD_US = 100_000

/** A cgroup v2 or v1 directory of our own with `percent` of one CPU, or undefined when none can be made. */
const cgroup = (percent: number): CpuQuota | undefined => {
  const quota = Math.max(1000, Math.round((PERIOD_US * percent) / 100))
  const name = `service-sdk-quota-${randomUUID().slice(0, 8)}`
  const candidates = [
    // cgroup v2: the root's controllers must offer cpu to its children
    {
      root: "/sys/fs/cgroup",
      ok: () => readFileSync("/sys/fs/cgroup/cgroup.controllers", "utf8").split(/\s+/).includes("cpu"),
      setup: (dir: string) => {
        try {
          writeFileSync("/sys/fs/cgroup/cgroup.subtree_control", "+cpu")
        } catch {
          // already on, or not ours to change (then cpu.max below fails and v1 is tried)
        }
        writeFileSync(join(dir, "cpu.max"), `${quota} ${PERIOD_US}`)
      },
      how: `cgroup v2 cpu.max ${quota} ${PERIOD_US}`
    },
    {
      root: "/sys/fs/cgroup/cpu",
      ok: () => existsSync("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
      setup: (dir: string) => {
        writeFileSync(join(dir, "cpu.cfs_period_us"), String(PERIOD_US))
        writeFileSync(join(dir, "cpu.cfs_quota_us"), String(quota))
      },
      how: `cgroup v1 cpu.cfs_quota_us ${quota} per ${PERIOD_US} µs`
    }
  ]
  for (const candidate of candidates) {
    const dir = join(candidate.root, name)
    try {
      if (!candidate.ok()) continue
      mkdirSync(dir)
    } catch {
      continue
    }
    try {
      candidate.setup(dir)
    } catch {
      try {
        rmdirSync(dir)
      } catch {
        // left for the OS
      }
      continue
    }
    const members = new Set<number>()
    return {
      how: candidate.how,
      add: (pid) => {
        writeFileSync(join(dir, "cgroup.procs"), String(pid))
        members.add(pid)
      },
      stop: () => {
        // move any member still alive back to the parent, then remove the cgroup
        for (const pid of members) {
          try {
            writeFileSync(join(candidate.root, "cgroup.procs"), String(pid))
          } catch {
            // gone already
          }
        }
        try {
          rmdirSync(dir)
        } catch {
          // a process still in it: the OS removes nothing, a later run uses another name
        }
      }
    }
  }
  return undefined
}

/** `nice 19` for the workers and a busy loop per core beside them: the fallback without cgroups. */
const competing = (): CpuQuota => {
  const loops: Array<ChildProcess> = Array.from({ length: availableParallelism() }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" })
  )
  return {
    how: `renice 19 beside ${loops.length} busy loops`,
    add: (pid) => {
      spawn("renice", ["-n", "19", "-p", String(pid)], { stdio: "ignore" })
    },
    stop: () => {
      for (const loop of loops) loop.kill("SIGKILL")
    }
  }
}

/** A CPU quota of `percent` of one CPU for the processes added to it (shared by them all). */
export const cpuQuota = (percent: number): CpuQuota => cgroup(percent) ?? competing()
