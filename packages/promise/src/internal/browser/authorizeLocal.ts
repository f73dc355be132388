/**
 * `authorizeLocal` in the browser bundle (scripts/build.mjs): a loopback HTTP server (`node:http`) cannot run in a
 * page or a Worker, so `asyncAuthorizeLocal` and `AsyncAuthorizationCode#authorizeLocal` reject with the
 * ConfigurationError that says what to do instead.
 */
import type * as Node from "../../../../effect4/service-sdk/src/authorizeLocal.js"
import { ConfigurationError } from "../../../../effect4/service-sdk/src/ServiceError.js"
import { noLoopbackServer } from "./reasons.js"

export const authorizeLocal: typeof Node.authorizeLocal = () => new ConfigurationError({ message: noLoopbackServer() })
