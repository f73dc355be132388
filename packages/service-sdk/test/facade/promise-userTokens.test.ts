/** The shared suite `promiseUserTokens` (`@service-sdk/conformance/facade`) on this line. */
import { promiseUserTokens } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

promiseUserTokens(line)
