/**
 * Redaction and the cleaning of server-supplied text: the one implementation both Effect lines use
 * (`packages/shared/src/redact.ts`, copied into `./shared/` by scripts/shared.mjs).
 */
export * from "@service-sdk/shared/redact"
