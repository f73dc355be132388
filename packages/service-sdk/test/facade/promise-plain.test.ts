/** The shared suite `promisePlain` (`@service-sdk/conformance/facade`) on this line. */
import { promisePlain } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

promisePlain(line)
