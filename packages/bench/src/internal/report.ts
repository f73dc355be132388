/**
 * What a part reports (figures, each beside the baseline it is a ratio of, with an optional target), and the text
 * tables printed from it.
 */
import type { Ratio } from "./harness.js"
import type { Quiet } from "./machine.js"

export type Unit = "ns/call" | "ops/s" | "ms" | "MB" | "requests" | "bytes"

export interface Quantity {
  readonly label: string
  readonly value: number
  readonly unit: Unit
}

export interface Target {
  /** what the target bounds: the ratio, or the figure itself */
  readonly on: "ratio" | "value"
  readonly op: "<=" | ">=" | "<" | "=="
  readonly limit: number
}

export interface Figure extends Quantity {
  readonly baseline?: Quantity | undefined
  /** figure over baseline (for ops/s: the throughput ratio), with its spread over rounds */
  readonly ratio?: Ratio | undefined
  readonly target?: Target | undefined
  readonly pass?: boolean | undefined
}

export interface PartReport {
  readonly id: number
  readonly title: string
  readonly quiet: Quiet
  /** how long the part ran */
  readonly seconds: number
  readonly figures: ReadonlyArray<Figure>
  readonly notes: ReadonlyArray<string>
  readonly data?: unknown
}

const holds = (target: Target, actual: number): boolean => {
  switch (target.op) {
    case "<=":
      return actual <= target.limit
    case ">=":
      return actual >= target.limit
    case "<":
      return actual < target.limit
    case "==":
      return actual === target.limit
  }
}

/** A figure, its target checked. */
export const figure = (
  quantity: Quantity,
  options: { readonly baseline?: Quantity; readonly ratio?: Ratio; readonly target?: Target } = {}
): Figure => {
  const { baseline, ratio, target } = options
  const actual = target?.on === "ratio" ? ratio?.ratio : quantity.value
  return {
    ...quantity,
    baseline,
    ratio,
    target,
    pass: target === undefined || actual === undefined ? undefined : holds(target, actual)
  }
}

const fixed = (value: number, digits: number) =>
  value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

export const formatQuantity = (value: number, unit: Unit): string => {
  if (!Number.isFinite(value)) return String(value)
  switch (unit) {
    case "ns/call":
      return value >= 10_000 ? `${fixed(value / 1000, 1)} µs/call` : `${fixed(value, value < 100 ? 1 : 0)} ns/call`
    case "ops/s":
      return value >= 1e6 ? `${fixed(value / 1e6, 2)} M ops/s` : `${fixed(value / 1e3, 1)} k ops/s`
    case "ms":
      return `${fixed(value, value < 10 ? 2 : 1)} ms`
    case "MB":
      return `${fixed(value, 2)} MB`
    case "requests":
      return `${fixed(value, 0)} ${value === 1 ? "request" : "requests"}`
    case "bytes":
      return Math.abs(value) >= 10_000 ? `${fixed(value / 1024, 1)} KB` : `${fixed(value, 0)} bytes`
  }
}

const formatRatio = (ratio: Ratio): string =>
  ratio.min === ratio.max
    ? `${fixed(ratio.ratio, 2)}×`
    : `${fixed(ratio.ratio, 2)}× (${fixed(ratio.min, 2)}–${fixed(ratio.max, 2)})`

const OPS: Record<Target["op"], string> = { "<=": "≤", ">=": "≥", "<": "<", "==": "=" }

export const formatTarget = (target: Target, unit: Unit): string =>
  target.on === "ratio"
    ? `${OPS[target.op]} ${target.limit}×`
    : `${OPS[target.op]} ${formatQuantity(target.limit, unit)}`

export const verdict = (pass: boolean | undefined): string => (pass === undefined ? "" : pass ? "PASS" : "MISS")

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    `  ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ")}`.trimEnd()
  return [line(header), line(widths.map((width) => "─".repeat(width))), ...rows.map(line)].join("\n")
}

const describeQuiet = (quiet: Quiet): string =>
  `${quiet.quiet ? "quiet" : "NOT quiet (bounded wait passed)"} after ${fixed(quiet.waitedMs / 1000, 1)} s: ` +
  `machine ${quiet.machineBusy === undefined ? "busy n/a" : `${fixed(quiet.machineBusy * 100, 0)} % busy`}, ` +
  `spin ${fixed(quiet.spinRatio, 2)}× its best, load average ${fixed(quiet.loadAverage1m, 2)}`

export const formatPart = (part: PartReport): string => {
  const rows = part.figures.map((item) => [
    item.label,
    formatQuantity(item.value, item.unit),
    item.baseline === undefined
      ? ""
      : `${item.baseline.label}: ${formatQuantity(item.baseline.value, item.baseline.unit)}`,
    item.ratio === undefined ? "" : formatRatio(item.ratio),
    item.target === undefined ? "" : formatTarget(item.target, item.unit),
    verdict(item.pass)
  ])
  return [
    `${part.id}. ${part.title} (${fixed(part.seconds, 1)} s)`,
    `  (${describeQuiet(part.quiet)})`,
    table(["figure", "value", "baseline (same run)", "ratio (spread)", "target", "result"], rows),
    ...part.notes.map((note) => `  · ${note}`)
  ].join("\n")
}

export interface TargetLine {
  readonly part: number
  readonly figure: string
  readonly actual: string
  readonly target: string
  readonly pass: boolean
}

export const targets = (parts: ReadonlyArray<PartReport>): ReadonlyArray<TargetLine> =>
  parts.flatMap((part) =>
    part.figures.flatMap((item) =>
      item.target === undefined || item.pass === undefined
        ? []
        : [
            {
              part: part.id,
              figure: item.label,
              actual:
                item.target.on === "ratio" && item.ratio !== undefined
                  ? `${fixed(item.ratio.ratio, 2)}×`
                  : formatQuantity(item.value, item.unit),
              target: formatTarget(item.target, item.unit),
              pass: item.pass
            }
          ]
    )
  )

export const formatSummary = (lines: ReadonlyArray<TargetLine>): string => {
  const held = lines.filter((line) => line.pass).length
  return [
    `Targets: ${held} of ${lines.length} hold${held === lines.length ? "" : `, ${lines.length - held} missed`}`,
    table(
      ["part", "figure", "measured", "target", "result"],
      lines.map((line) => [String(line.part), line.figure, line.actual, line.target, verdict(line.pass)])
    )
  ].join("\n")
}
