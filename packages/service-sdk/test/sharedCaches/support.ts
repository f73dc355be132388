/**
 * Helpers of the shared-cache edge tests (issue 28): temp directories, a file system whose steps can be delayed,
 * and what the lock of this host and PID namespace records.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, readlinkSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { TokenCache, type TokenInfo } from "@service-sdk/effect"
import { tokenInfo, value } from "../fixtures.js"

export const tempDir = (prefix = "shared-edges-") => mkdtempSync(join(tmpdir(), prefix))

export const accessOf = (found: Option.Option<TokenInfo>) => Option.map(found, (token) => value(token.accessToken))

export const fileCache = (path: string, options?: TokenCache.FileOptions) =>
  (options === undefined ? TokenCache.file(path) : TokenCache.file(path, options)).pipe(
    Effect.provide(NodeFileSystem.layer)
  )

export { tokenInfo }

/** The steps of the file caches that a delayed file system can slow down. */
export const STEPS = [
  "writeFileString",
  "link",
  "rename",
  "remove",
  "makeDirectory",
  "readDirectory",
  "utimes",
  "exists",
  "stat",
  "readFileString"
] as const

export type Step = (typeof STEPS)[number]

/**
 * The Node file system with some steps delayed (before the step runs): `delays[step]` millis, for every call or,
 * with `once`, for the first call only; with `only`, for calls whose first argument (a path) it accepts.
 */
export const delayedFileSystem = (
  delays: Partial<Record<Step, number>>,
  options: { readonly once?: boolean; readonly only?: (path: string) => boolean } = {}
) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (real) => {
      const used = new Set<string>()
      const wrapped: Record<string, unknown> = { ...real }
      for (const [step, millis] of Object.entries(delays)) {
        const original = (real as unknown as Record<string, (...args: Array<unknown>) => Effect.Effect<unknown>>)[step]!
        wrapped[step] = (...args: Array<unknown>) =>
          Effect.suspend(() => {
            if (options.once === true && used.has(step)) return original(...args)
            if (options.only !== undefined && !options.only(String(args[0]))) return original(...args)
            used.add(step)
            return Effect.zipRight(Effect.sleep(`${millis} millis`), original(...args))
          })
      }
      return wrapped as unknown as FileSystem.FileSystem
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))

/** What a lock of a process of this host and PID namespace records (Linux). */
export const thisNamespace = () => ({
  host: hostname(),
  ns: `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}/${readlinkSync("/proc/self/ns/pid")}`
})

export const isRoot = process.getuid?.() === 0

/** Whether a command runs here (e.g. `unshare --pid --fork true` needs root and a kernel that allows it). */
export const runs = (command: string, args: ReadonlyArray<string>): boolean => {
  const result = spawnSync(command, args, { stdio: "ignore", timeout: 10_000 })
  return result.status === 0
}

/** Runs `sh -c script` as user `nobody` (uid 65534). */
export const asNobody = (script: string) =>
  execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", "-c", script], {
    stdio: "pipe"
  })

export { bundle } from "./bundle.mjs"
