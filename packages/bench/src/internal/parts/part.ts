/** What a part returns; the runner adds the id and the quiet check. */
import type { Figure } from "../report.js"

export interface PartResult {
  readonly title: string
  readonly figures: ReadonlyArray<Figure>
  readonly notes: ReadonlyArray<string>
  /** raw figures for the JSON */
  readonly data?: unknown
}
