/**
 * The file machinery of the Effect 4 line's facade (`internal/fileProgram.ts`: `fileTokenCache` and
 * `directoryTokenStore` check their path with it first) in the browser bundle (scripts/build.mjs): no file system,
 * so the check is the ConfigurationError that says so, and no Node built-in is bundled.
 */
import type * as Node from "../../../../effect4/service-sdk/src/internal/fileProgram.js"
import { ConfigurationError } from "../../../../effect4/service-sdk/src/ServiceError.js"
import { noFiles } from "./reasons.js"

// (an SDK error is itself an Effect that fails with it)
export const checkedPath: typeof Node.checkedPath = (name) => new ConfigurationError({ message: noFiles(name) })

export const run: typeof Node.run = () => new ConfigurationError({ message: noFiles("fileTokenCache") })
