/**
 * @since 1.0.0
 */

/**
 * Invalid options, fault or config input, or the server could not start (e.g. the port is in use). A plain `Error`
 * with a literal `_tag` (the package carries no Effect type, so that it installs beside any Effect or none).
 *
 * @since 1.0.0
 * @category errors
 */
export class EmulatorError extends Error {
  readonly _tag = "EmulatorError" as const
  override readonly cause?: unknown
  constructor(options: { readonly message: string; readonly cause?: unknown }) {
    super(options.message)
    this.name = "EmulatorError"
    if (options.cause !== undefined) this.cause = options.cause
  }
}
