/** The shared suite `defaultClient` (`@service-sdk/conformance/facade`) on this line. */
import { defaultClient } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

defaultClient(line)
