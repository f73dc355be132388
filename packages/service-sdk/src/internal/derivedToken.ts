/**
 * A `TokenInfo` made from fields that are valid already: another TokenInfo's, a decoded token response's. The class
 * constructor's own Schema pass is skipped (Schema.Class's `disableValidation`): it was most of a renewal's CPU in
 * this process, run four times per renewal over the same fields.
 */
import { TokenInfo } from "../TokenInfo.js"

export const derivedToken = (fields: ConstructorParameters<typeof TokenInfo>[0]): TokenInfo =>
  new TokenInfo(fields, true)
