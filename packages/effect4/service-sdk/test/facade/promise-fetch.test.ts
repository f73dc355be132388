/** The shared suite `promiseFetch` (`@service-sdk/conformance/facade`) on this line. */
import { promiseFetch } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

promiseFetch(line)
