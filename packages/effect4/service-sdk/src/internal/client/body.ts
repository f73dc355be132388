/**
 * Reading the data API's bodies: the JSON of an error response (never failing: a broken error body must not hide the
 * status) and the API's error text in it.
 */

const utf8 = new TextDecoder()

/** The decoded JSON body of an error response, or undefined when it is empty or not JSON. */
export const errorPayload = (body: string | ArrayBuffer): unknown => {
  try {
    return JSON.parse(typeof body === "string" ? body : utf8.decode(body))
  } catch {
    return undefined
  }
}

const stringField = (value: unknown, key: string): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const field = (value as Record<string, unknown>)[key]
  return typeof field === "string" && field.trim() !== "" ? field : undefined
}

/** The API's own words: `error.message`, else `error_description`, `error` or `message`; clipped. */
export const apiErrorMessage = (payload: unknown): string | undefined => {
  const text =
    stringField((payload as Record<string, unknown> | null)?.error, "message") ??
    stringField(payload, "error_description") ??
    stringField(payload, "error") ??
    stringField(payload, "message")
  return text === undefined ? undefined : text.length > 300 ? `${text.slice(0, 300)}…` : text.trim()
}
