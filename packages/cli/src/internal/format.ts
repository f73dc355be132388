/**
 * Output helpers: durations and a plain-text table (tokens are masked with service-sdk's `maskToken`).
 */
export const seconds = (millis: number): string => `${(millis / 1000).toFixed(millis < 10_000 ? 2 : 1)} s`

/** A table with a header row, columns padded to their widest cell. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd()
  return [line(header), widths.map((width) => "─".repeat(width)).join("  "), ...rows.map(line)].join("\n")
}
