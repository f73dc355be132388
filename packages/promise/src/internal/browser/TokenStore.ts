/**
 * `TokenStore` of the Effect 4 line in the browser bundle (scripts/build.mjs): `directoryTokenStore` checks its path
 * first (`fileProgram.ts`, a ConfigurationError), so `directory` is never reached; it refuses the same way. Files
 * per user need `node:fs`, which is not bundled.
 */
import { ConfigurationError } from "../../../../effect4/service-sdk/src/ServiceError.js"
import type * as Node from "../../../../effect4/service-sdk/src/TokenStore.js"
import { noFiles } from "./reasons.js"

export type TokenStore = Node.TokenStore

export const directory: typeof Node.directory = () =>
  new ConfigurationError({ message: noFiles("directoryTokenStore") })
