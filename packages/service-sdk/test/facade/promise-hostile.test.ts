/** The shared suite `promiseHostile` (`@service-sdk/conformance/facade`) on this line. */
import { promiseHostile } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

promiseHostile(line)
