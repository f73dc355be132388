/** The shared suite `promiseClient` (`@service-sdk/conformance/facade`) on this line. */
import { promiseClient } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

promiseClient(line)
