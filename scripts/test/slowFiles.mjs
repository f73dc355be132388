/**
 * The test files that run outside the process: OS processes, Chromium, Redis, bundles, installs, the docs.
 * `vitest.workspace.ts` and `scripts/test.mjs` (for both lines' `--exclude`) read them from here. `npm run test:fast`
 * leaves them out. `npm test` runs the unit projects' other files first, sharing modules, then these, each isolated
 * in its own worker.
 */
export const slowFiles = [
  "**/*processes*.test.ts",
  "**/mixedFleet*",
  "**/browser*.test.ts",
  // Chromium and the browser bundle (the Effect 4 line's test/browser/)
  "**/test/browser/**",
  "**/bundle.test.ts",
  "**/bin.test.ts",
  "**/signals.test.ts",
  "**/terminal.test.ts",
  "**/emulator-flow.test.ts",
  "**/sharedCache.test.ts",
  "**/newcomer.test.ts",
  "**/startup.test.ts",
  "**/package.test.ts",
  "**/integration/userTokens.test.ts",
  // the CLI's suites that run its built bin as a process (each builds it first: tsc -b and a bundle)
  "**/cli.test.ts",
  "**/help.test.ts",
  "**/hardening.test.ts",
  "**/login.pkce.test.ts",
  "**/signInEnd.test.ts",
  "**/test/docs/**",
  "**/toolchain/**"
]

/** The Effect 3 line's projects whose other files are unit and emulator tests (the inner loop's). */
export const unitProjects = ["service-sdk", "emulator", "promise", "cli"]

/** `slowFiles` as a project's `include`: only test files (a folder's glob would also take its helpers). */
export const slowFilesInclude = slowFiles.map((glob) =>
  glob.endsWith("/**") ? `${glob}/*.test.ts` : glob.endsWith("*") ? `${glob}.test.ts` : glob
)

/** Set by `npm test`'s second Effect 3 run: the unit projects then take only their slow files. */
export const slowFilesOnly = process.env.SERVICE_SDK_TEST_SLOW_FILES === "1"
