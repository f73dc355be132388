/**
 * `#file-cache` in a browser page (package.json `imports`, the `browser` condition): there is no file system, so
 * `TokenCache.file` fails with a ConfigurationError that says so, and none of the Node file machinery (`node:fs`,
 * `node:crypto`, `process`) is bundled into a page.
 */
import * as Effect from "effect/Effect"
import { ConfigurationError } from "../../ServiceError.js"
import type * as Node from "../fileCache.js"

const NO_FILES = "there is no file system in a browser page: use TokenCache.browser (docs/browser.md)"

export const checkedPath: typeof Node.checkedPath = (name) =>
  Effect.fail(new ConfigurationError({ message: `${name}: ${NO_FILES}` }))

export const run: typeof Node.run = () =>
  Effect.fail(new ConfigurationError({ message: `TokenCache.file: ${NO_FILES}` })) as never

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
