/**
 * Reading the data API's bodies: JSON parsing that does not throw, the API's error text, and error bodies read
 * without ever failing (a broken error body must not hide the status).
 */
import * as Option from "effect/Option"
import { cleanUntrustedText } from "@service-sdk/shared/redact"

export const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

const MAX_MESSAGE = 300

/** Server-supplied text: the one cleaner (escape sequences, control, bidi and invisible characters), then capped. */
const clip = (text: string) => {
  const cleaned = cleanUntrustedText(text, MAX_MESSAGE + 1).trim()
  return cleaned.length > MAX_MESSAGE ? `${cleaned.slice(0, MAX_MESSAGE)}…` : cleaned
}

const stringField = (value: unknown, key: string): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const field = (value as Record<string, unknown>)[key]
  return typeof field === "string" && field.trim() !== "" ? field : undefined
}

/**
 * The API's own words: `error.message` of `{"error": {"status", "message"}}`, else an OAuth-style
 * `error_description` or `error` string, else a top-level `message`.
 */
export const apiErrorMessage = (payload: unknown): string | undefined => {
  if (typeof payload !== "object" || payload === null) return undefined
  const error = (payload as Record<string, unknown>).error
  const text =
    stringField(error, "message") ??
    stringField(payload, "error_description") ??
    stringField(payload, "error") ??
    stringField(payload, "message")
  if (text === undefined) return undefined
  const cleaned = clip(text)
  return cleaned === "" ? undefined : cleaned
}

const utf8 = new TextDecoder()

/** A body as text (UTF-8, a leading BOM dropped, as `Response.text()` reads it); text read as such is kept. */
export const bodyText = (body: string | ArrayBuffer | Uint8Array): string =>
  typeof body === "string" ? body : utf8.decode(body)

/** The decoded JSON body of an error response, or undefined when it is empty or not JSON. */
export const errorPayload = (body: string | ArrayBuffer): unknown => Option.getOrUndefined(parseJson(bodyText(body)))
