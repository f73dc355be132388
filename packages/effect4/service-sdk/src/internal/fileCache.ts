/**
 * The file machinery `TokenCache.file` runs on (Node), imported as `#file-cache`: a browser page gets
 * `internal/browser/fileCache.ts` instead (package.json `imports`, the `browser` condition), so that no Node
 * built-in is on the browser path.
 */
export { checkedPath, run } from "./fileProgram.js"
export * as FileEntry from "./shared/fileEntry.js"
export * as FileLock from "./shared/fileLock.js"
export * as Safety from "./shared/fileSafety.js"
