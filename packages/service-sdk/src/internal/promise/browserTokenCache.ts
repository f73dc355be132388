/**
 * `browserTokenCache` of the Effect 3 line's Promise facade: the name both lines export (the same public names), with
 * the answer this line has for it. The Effect 3 line does not run in a browser page; the Effect 4 line's facade and
 * `@service-sdk/promise` do.
 */
import { ConfigurationError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"

/**
 * A token cache shared by the tabs of one origin: on this line, always a ConfigurationError that names the packages
 * that have it (`@service-sdk/effect` 2.x, `@service-sdk/promise`), never a cache of one tab.
 *
 * @since 1.0.0
 * @category browser
 */
export const browserTokenCache = (_options?: { readonly key?: string | undefined }): TokenCache => {
  throw new ConfigurationError({
    message:
      "browserTokenCache: the Effect 3 line (@service-sdk/effect 1.x) does not run in a browser page; use " +
      "@service-sdk/promise or @service-sdk/effect 2.x (the Effect 4 line), whose browserTokenCache shares one " +
      "renewal between the tabs"
  })
}
