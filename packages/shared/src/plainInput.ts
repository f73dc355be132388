/**
 * What plain code hands the Promise facades, read once and safely (both lines): an options object whose getter or
 * Proxy throws, or a list too long to walk (`scope: new Array(2 ** 32 - 1)`), is reported as a problem the caller
 * turns into its ConfigurationError, never a raw Error or a hang; and a user's logger that throws (an EPIPE on
 * stderr) never fails the call that logged.
 */

/** The longest list an option may hold (a scope list, a list of ids): longer is a problem, not a walk of it. */
export const MAX_LIST_ENTRIES = 1_000

/** What went wrong reading a value, without reading anything more of it (a hostile value may throw again). */
export const describeThrown = (thrown: unknown): string => {
  try {
    if (thrown instanceof Error) return `${thrown.name}: ${String(thrown.message).slice(0, 200)}`
    return typeof thrown
  } catch {
    return "an unreadable value"
  }
}

class ListTooLong {
  constructor(readonly message: string) {}
}

/** A list copied (every entry read once), or ListTooLong; anything else as is. */
const copyValue = (name: string, key: string, value: unknown): unknown => {
  if (!Array.isArray(value)) return value
  const length = value.length
  if (!(length <= MAX_LIST_ENTRIES)) {
    throw new ListTooLong(`${name}: ${key} has ${length} entries (at most ${MAX_LIST_ENTRIES})`)
  }
  return Array.from({ length }, (_, index) => value[index])
}

/**
 * A shallow copy of an options object from plain code: each own enumerable property read once, lists copied (at
 * most {@link MAX_LIST_ENTRIES} entries). `problem` says what could not be read (a getter or a Proxy trap that
 * threw, a list too long).
 */
export const readPlainOptions = (
  name: string,
  value: object
): { readonly options: Record<string, unknown> } | { readonly problem: string } => {
  try {
    const options: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      options[key] = copyValue(name, key, (value as Record<string, unknown>)[key])
    }
    return { options }
  } catch (thrown) {
    if (thrown instanceof ListTooLong) return { problem: thrown.message }
    return { problem: `${name}: the options could not be read (a getter or proxy threw ${describeThrown(thrown)})` }
  }
}

const listed = (names: ReadonlyArray<string>): string =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`

/** The methods of a logger, read once; `problem` names what is missing or could not be read. */
export const readLoggerMethods = <K extends string>(
  logger: unknown,
  methods: ReadonlyArray<K>
): { readonly methods: Readonly<Record<K, (line: string) => unknown>> } | { readonly problem: string } => {
  try {
    const read = {} as Record<K, (line: string) => unknown>
    const missing: Array<K> = []
    for (const method of methods) {
      const value: unknown =
        typeof logger === "object" && logger !== null ? (logger as Record<string, unknown>)[method] : undefined
      if (typeof value === "function") {
        read[method] = (line) => (value as (line: string) => unknown).call(logger, line)
      } else missing.push(method)
    }
    return missing.length === 0
      ? { methods: read }
      : { problem: `logger must have the methods ${listed(methods)} (missing ${missing.join(", ")})` }
  } catch (thrown) {
    return { problem: `logger could not be read (a getter or proxy threw ${describeThrown(thrown)})` }
  }
}

/**
 * Calls a user's logging function once and forgets what went wrong: a throw, or a returned Promise that rejects,
 * is swallowed (logging never fails a call, never crashes the process, and is not tried again).
 */
export const callLogger = (method: (line: string) => unknown, line: string): void => {
  try {
    const result = method(line)
    if (typeof result === "object" && result !== null && typeof (result as PromiseLike<unknown>).then === "function") {
      ;(result as PromiseLike<unknown>).then(undefined, () => undefined)
    }
  } catch {
    // swallowed: see above
  }
}
