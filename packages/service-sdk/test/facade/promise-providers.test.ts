/** The shared suite `promiseProviders` (`@service-sdk/conformance/facade`) on this line. */
import { promiseProviders } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

promiseProviders(line)
