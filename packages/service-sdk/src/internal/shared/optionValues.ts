// Copied from packages/shared/src/optionValues.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * Bad option values from plain JS, read the same way by both lines: what a message may say about a value, and which
 * duration inputs are below zero or NaN (a duration decoder would take them as they are, or as zero).
 */

/** What a plain-JS caller passed, for a message: the type and, for numbers, the value (never a string's content). */
export const describeValue = (value: unknown): string =>
  typeof value === "number" || typeof value === "bigint" || typeof value === "boolean"
    ? String(value)
    : value === null
      ? "null"
      : Array.isArray(value)
        ? "an array"
        : typeof value

/** Whether a duration input is below zero or NaN: the number, the text (`"NaN seconds"`) or a part of a tuple. */
export const negativeOrNaN = (value: unknown): boolean => {
  if (typeof value === "number") return !(value >= 0)
  if (typeof value === "bigint") return value < 0n
  if (typeof value === "string") return /^\s*-|nan/i.test(value)
  if (Array.isArray(value)) return value.some((part) => typeof part !== "number" || !(part >= 0))
  return false
}
