/**
 * The file machinery `TokenCache.file` runs on (Node), imported as `#file-cache`: a browser page gets
 * `internal/browser/fileCache.ts` instead (package.json `imports`, the `browser` condition), so that no Node
 * built-in is on the browser path.
 */
export { checkedPath, run } from "./fileProgram.js"
export * as FileEntry from "@service-sdk/shared/fileEntry"
export * as FileLock from "@service-sdk/shared/fileLock"
export * as Safety from "@service-sdk/shared/fileSafety"
