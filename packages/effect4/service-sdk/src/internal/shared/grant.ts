// Copied from packages/shared/src/grant.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The token request's form (RFC 6749 §3.2): client authentication and the body of each grant, as plain strings.
 * Each line unwraps its `Redacted` values at the edge, right before the request is built.
 */

/** A grant with its secret values already unwrapped. */
export type GrantForm =
  | { readonly grant_type: "client_credentials"; readonly scope?: string | undefined }
  | {
      readonly grant_type: "authorization_code"
      readonly code: string
      readonly redirect_uri: string
      /** PKCE (RFC 7636 §4.5) */
      readonly code_verifier?: string | undefined
    }
  | { readonly grant_type: "refresh_token"; readonly refresh_token: string; readonly scope?: string | undefined }

/** `application/x-www-form-urlencoded` encoding of one value (spaces as `+`). */
export const formEncode = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2)

/** RFC 6749 §2.3.1: client id and secret are form-encoded before they are joined and base64-encoded. */
export const basicAuthorization = (clientId: string, clientSecret: string): string =>
  `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`, "utf8").toString("base64")}`

/** The form parameters of a grant (RFC 6749 §4.1.3, §4.4.2, §6); no parameter is sent empty. */
export const grantParameters = (grant: GrantForm): Record<string, string> => {
  const params: Record<string, string> = { grant_type: grant.grant_type }
  switch (grant.grant_type) {
    case "client_credentials":
      if (grant.scope) params.scope = grant.scope
      break
    case "authorization_code":
      params.code = grant.code
      params.redirect_uri = grant.redirect_uri
      if (grant.code_verifier) params.code_verifier = grant.code_verifier
      break
    case "refresh_token":
      params.refresh_token = grant.refresh_token
      if (grant.scope) params.scope = grant.scope
      break
  }
  return params
}

/**
 * How the client authenticates (RFC 6749 §2.3.1, §3.2.1): a confidential client with HTTP Basic; a public client
 * (no secret) identifies itself with `client_id` in the form body and sends no Authorization header.
 */
export const clientAuthentication = (
  clientId: string,
  clientSecret: string | undefined
): { readonly headers: Record<string, string>; readonly body: Record<string, string> } =>
  clientSecret === undefined
    ? { headers: {}, body: { client_id: clientId } }
    : { headers: { authorization: basicAuthorization(clientId, clientSecret) }, body: {} }

/**
 * The secret values a grant's request carries as they are sent (the client secret, the code, the PKCE verifier, the
 * refresh token), in that order.
 */
export const grantSecrets = (grant: GrantForm, clientSecret: string | undefined): Array<string> => {
  const secrets: Array<string | undefined> = [clientSecret]
  if (grant.grant_type === "authorization_code") secrets.push(grant.code, grant.code_verifier)
  if (grant.grant_type === "refresh_token") secrets.push(grant.refresh_token)
  return secrets.filter((secret): secret is string => secret !== undefined && secret !== "")
}

/** A confidential client's Basic credential in the forms a server could echo: the header, its base64, `id:secret`. */
export const credentialSecrets = (clientId: string, clientSecret: string | undefined): Array<string> => {
  if (clientSecret === undefined) return []
  const basic = basicAuthorization(clientId, clientSecret)
  const encoded = basic.slice("Basic ".length)
  return [basic, encoded, Buffer.from(encoded, "base64").toString("utf8")]
}

/**
 * The secret values a token request carries ({@link grantSecrets} and {@link credentialSecrets}): what must be masked
 * wherever server-supplied text could echo them back.
 */
export const requestSecrets = (grant: GrantForm, clientId: string, clientSecret: string | undefined): Array<string> => [
  ...grantSecrets(grant, clientSecret),
  ...credentialSecrets(clientId, clientSecret)
]

/** Scope as sent: a list joined with single spaces; a string with commas and whitespace runs as single spaces. */
export const normalizeScope = (scope: string | ReadonlyArray<string> | undefined): string | undefined => {
  if (scope === undefined) return undefined
  const text = (typeof scope === "string" ? scope.split(/[\s,]+/) : scope.flatMap((s) => s.split(/[\s,]+/)))
    .filter((s) => s !== "")
    .join(" ")
  return text === "" ? undefined : text
}
