/**
 * `#file-cache` in a browser page (package.json `imports`, the `browser` condition): there is no file system, so
 * `TokenCache.file` fails with a ConfigurationError that says so, and none of the Node file machinery (`node:fs`,
 * `node:crypto`, `process`) is bundled into a page.
 */
import * as Effect from "effect/Effect"
import { ConfigurationError } from "../../ServiceError.js"
import type * as Node from "../fileCache.js"
import { inCloudflareWorker, workerFileProblem } from "@service-sdk/shared/workers"

const NO_FILES = "there is no file system in a browser page: use TokenCache.browser (docs/browser.md)"

/** A Worker bundled with the `browser` condition (wrangler's default) gets this module too: its reason is said. */
const noFiles = (name: string) => (inCloudflareWorker() ? workerFileProblem(name) : `${name}: ${NO_FILES}`)

export const checkedPath: typeof Node.checkedPath = (name) =>
  Effect.fail(new ConfigurationError({ message: noFiles(name) }))

export const run: typeof Node.run = () =>
  Effect.fail(new ConfigurationError({ message: noFiles("TokenCache.file") })) as never

export const makeFileCache: typeof Node.makeFileCache = () => {
  throw new ConfigurationError({ message: noFiles("TokenCache.file") })
}

const unavailable = () => {
  throw new Error(NO_FILES)
}

export const FileEntry = {
  make: () => ({ get: unavailable, write: unavailable, clear: unavailable, lock: {} })
} as unknown as typeof Node.FileEntry

export const FileLock = {
  DEFAULT_LOCK_OPTIONS: { ttlMillis: 10_000, waitMillis: 30_000 }
} as unknown as typeof Node.FileLock

export const Safety = {
  directoryVerdict: () => "refuse",
  directoryProblem: () => NO_FILES
} as unknown as typeof Node.Safety
