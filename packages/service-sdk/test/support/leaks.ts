/** Canary tests: everything a program could print, and the check that no canary value is in it. */
import { expect } from "@effect/vitest"
import { Cause, Effect, Exit, Logger, LogLevel } from "effect"
import * as util from "node:util"

/** Every string reachable from `value` (own fields, hidden ones included, and Map entries). */
export const strings = (value: unknown, seen = new Set<unknown>(), depth = 0): Array<string> => {
  if (typeof value === "string") return [value]
  if (typeof value !== "object" || value === null || seen.has(value) || depth > 12) return []
  seen.add(value)
  const out: Array<string> = []
  const entries = value instanceof Map ? [...value.entries()].flat() : []
  for (const item of entries) out.push(...strings(item, seen, depth + 1))
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)
    if (descriptor !== undefined && "value" in descriptor) out.push(...strings(descriptor.value, seen, depth + 1))
  }
  return out
}

/** Fails when a text holds a canary; also when there is no text at all (a recorder that saw nothing proves nothing). */
export const assertNoCanary = (texts: ReadonlyArray<string>, canaries: ReadonlyArray<string>, label: string) => {
  expect(texts.length, `${label}: nothing was recorded`).toBeGreaterThan(0)
  for (const text of texts) {
    for (const canary of canaries) expect(text, `${label} leaked ${canary}`).not.toContain(canary)
  }
}

/** Records log lines (Debug and up, two formats) and every rendering of every failure it observes. */
export const makeLeakRecorder = (canaries: ReadonlyArray<string>) => {
  const texts: Array<string> = []
  const logger = Logger.make((options) => {
    texts.push(Logger.logfmtLogger.log(options), Logger.stringLogger.log(options))
  })
  /** Runs `self` to its `Exit`, recording a failure as pretty cause, string, inspect, JSON, stack and every field. */
  const observe = <A, E, R>(self: Effect.Effect<A, E, R>) =>
    self.pipe(
      Effect.exit,
      Effect.tap((exit) =>
        Effect.sync(() => {
          if (Exit.isFailure(exit)) {
            texts.push(Cause.pretty(exit.cause, { renderErrorCause: true }))
            for (const error of Cause.failures(exit.cause)) {
              const e = error as unknown
              texts.push(
                String(e),
                util.inspect(e, { depth: 10, showHidden: true }),
                JSON.stringify(e) ?? "",
                e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : "",
                ...strings(e)
              )
            }
          }
        })
      )
    )
  /** Sends the log lines of `self`, Debug included, to the recorder. */
  const captureLogs = <A, E, R>(self: Effect.Effect<A, E, R>) =>
    self.pipe(Logger.withMinimumLogLevel(LogLevel.Debug), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  const assertClean = (label = "errors and logs") => assertNoCanary(texts, canaries, label)
  return { texts, observe, captureLogs, assertClean }
}
