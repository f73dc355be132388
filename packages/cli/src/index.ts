/**
 * The `service-sdk` command line: `demo`, `token`, `login`, `whoami`, `logout`, `emulator`. The package is its bin
 * (`service-sdk`), a bundle with no dependency and no peer, so it installs beside Effect 3, Effect 4 or none; this
 * module gives plain code the help text.
 *
 * @since 1.0.0
 * @module @service-sdk/cli
 */
import * as internal from "./internal/main.js"

/**
 * The help `argv` asks for (`--help`, `-h`, or no command; `argv` as `process.argv`, node and script path
 * included), as text `width` columns wide; undefined when it asks for none.
 *
 * @since 1.0.0
 */
export const help: (argv: ReadonlyArray<string>, width: number) => string | undefined = internal.help
