/**
 * The pages of the loopback server (`@service-sdk/shared/loopbackPages`, the same on both lines), and the failure page
 * for this line's errors.
 */
import type { AuthenticationError, ServiceError } from "../../ServiceError.js"
import { failurePage, type Page } from "@service-sdk/shared/loopbackPages"

export {
  alreadyReceivedPage,
  escapeHtml,
  failurePage,
  methodNotAllowedPage,
  notFoundPage,
  type Page,
  successPage
} from "@service-sdk/shared/loopbackPages"

/** The failure page for an error of the flow: the OAuth `error` when there is one, else the error's safe message. */
export const failurePageFor = (error: ServiceError): Page => {
  if (error._tag === "AuthenticationError") {
    const payload = (error as AuthenticationError).payload
    return payload !== undefined
      ? failurePage({ status: 400, error: payload.error, description: payload.error_description })
      : failurePage({ status: 400, description: error.message })
  }
  // The browser's request was fine; what failed was behind it (the token endpoint, the cache).
  return failurePage({ status: error._tag === "TransportError" ? 502 : 500, description: error.message })
}
