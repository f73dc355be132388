/** `AsyncServiceClient` on this line: the shared suite `promiseClient` (`@service-sdk/conformance/facade`). */
import { promiseClient } from "@service-sdk/conformance/facade"
import { line } from "./line.js"

promiseClient(line)
