/**
 * `AsyncAuthorizationCode#authorizeLocal` and `asyncAuthorizeLocal` on this line: the shared suite `authorizeLocal`
 * (`@service-sdk/conformance/facade`).
 */
import { authorizeLocal } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

authorizeLocal(line)
