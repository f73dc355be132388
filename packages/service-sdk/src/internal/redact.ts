/**
 * Redaction and the cleaning of server-supplied text: the one implementation both Effect lines use
 * (`@service-sdk/shared/redact`, the private core package both lines import).
 */
export * from "@service-sdk/shared/redact"
