/**
 * Reading the data API's bodies: JSON parsing that does not throw, the API's error text, and error bodies read
 * without ever failing (a broken error body must not hide the status).
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

const MAX_MESSAGE = 300

const clip = (text: string) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text)

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
  return text === undefined ? undefined : clip(text.trim())
}

/** The decoded JSON body of an error response, or undefined when it is empty, not JSON or unreadable. */
export const errorPayload = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<unknown> =>
  response.text.pipe(
    Effect.map((text) => Option.getOrUndefined(parseJson(text))),
    Effect.orElseSucceed(() => undefined)
  )
