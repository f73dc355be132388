/**
 * Redirect URIs: the Service's rules, checked when a provider or client is configured (RFC 8252 §7.3, §8.3; OAuth
 * 2.1; DESIGN section 9): the canonical form, no credentials or fragment, no port 0, `https` or `http` on a loopback
 * IP literal. The one implementation both Effect lines use (`packages/shared/src/redirectUri.ts`).
 */
export * from "@service-sdk/shared/redirectUri"
