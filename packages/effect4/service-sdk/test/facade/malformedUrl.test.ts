/** The shared suite `malformedUrl` (`@service-sdk/conformance/facade`) on this line. */
import { malformedUrl } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

malformedUrl(line)
