/**
 * The licence notices of what a bundle embeds (issue 39 item 5). A bundle (`@service-sdk/promise`'s dist, the CLI's
 * bin, the emulator's) carries the code of other packages (Effect, its dependencies), and their licences (MIT and the
 * like) ask that their copyright and licence notices travel with that code. `writeNotices` reads esbuild's metafile
 * of a bundle (`metafile: true`), finds every package whose files went into it (name, version, `license` field) and
 * writes `THIRD_PARTY_NOTICES` beside the bundle with the licence text each package ships (its LICENSE / LICENCE /
 * COPYING file, and a NOTICE file when it has one). The package then lists that file in its `files`.
 *
 * A package whose licence text cannot be found fails the build: nothing ships without the notices of what it embeds.
 * Our own code (the workspace packages, imported by their sources) is not listed: the package's own LICENSE covers it.
 *
 * The bundle scripts call it with their metafile (`packages/promise/scripts/build.mjs`, `packages/cli/scripts/bundle.mjs`):
 *
 *   import { writeNotices } from "../../../scripts/notices.mjs"
 *   writeNotices(metafile, { workingDir: root, out: join(dist, "THIRD_PARTY_NOTICES") })
 *
 * It also records the bundle's input files in `<workingDir>/build/bundle-inputs.json` (not published), so that a test
 * (scripts/test/notices.test.ts) can check the notices against what esbuild actually bundled.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, isAbsolute, join, resolve, sep } from "node:path"

/** A licence file's name: LICENSE, LICENCE, COPYING, with any extension or suffix (LICENSE-MIT, LICENSE.md). */
const licenceFile = /^(licen[cs]e|copying)([.-].*)?$/i
/** Apache-2.0 asks that a NOTICE file be reproduced too. */
const noticeFile = /^notice([.-].*)?$/i

/**
 * The folder of the npm package that holds `file` (an absolute path), or undefined when the file is not inside a
 * `node_modules` folder (our own sources): the last `node_modules/<name>` or `node_modules/@scope/name` of its path.
 */
export const packageDirOf = (file) => {
  const parts = file.split(sep)
  const index = parts.lastIndexOf("node_modules")
  if (index === -1 || index + 1 >= parts.length) return undefined
  const width = parts[index + 1].startsWith("@") ? 2 : 1
  if (index + width >= parts.length) return undefined
  return parts.slice(0, index + 1 + width).join(sep)
}

/**
 * The input files of an esbuild metafile as absolute paths (inputs are relative to the build's working directory);
 * inputs of a plugin's own namespace (`lazy-builtin:crypto`) are not files and are left out.
 */
export const inputFiles = (metafile, workingDir) =>
  Object.keys(metafile.inputs)
    .filter((input) => !/^[a-z][\w-]*:/i.test(input) || isAbsolute(input))
    .map((input) => resolve(workingDir, input))

/**
 * The packages a bundle embeds: `{ name, version, license, dir, licenceFiles }` sorted by name then version, one entry
 * per name and version (two copies of one version in two folders are one entry).
 */
export const embeddedPackages = (metafile, workingDir) => {
  const found = new Map()
  for (const file of inputFiles(metafile, workingDir)) {
    const dir = packageDirOf(file)
    if (dir === undefined) continue
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
    const key = `${manifest.name}@${manifest.version}`
    if (found.has(key)) continue
    const files = readdirSync(dir).sort()
    found.set(key, {
      name: manifest.name,
      version: manifest.version,
      license: typeof manifest.license === "string" ? manifest.license : (manifest.license?.type ?? "UNKNOWN"),
      dir,
      licenceFiles: files.filter((name) => licenceFile.test(name)).map((name) => join(dir, name)),
      noticeFiles: files.filter((name) => noticeFile.test(name)).map((name) => join(dir, name))
    })
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version))
}

const rule = "=".repeat(80)

/**
 * The text of THIRD_PARTY_NOTICES for these packages. Throws, naming them, when a package has no licence file.
 */
export const noticesText = (packages, { title } = {}) => {
  const missing = packages.filter((pkg) => pkg.licenceFiles.length === 0)
  if (missing.length > 0) {
    throw new Error(
      `no licence file found for ${missing.map((pkg) => `${pkg.name}@${pkg.version} (${pkg.dir})`).join(", ")}: ` +
        "a bundle must ship the notices of what it embeds (scripts/notices.mjs)"
    )
  }
  const head = [
    title ?? "This package bundles the following third-party packages.",
    "Their licence and copyright notices follow, as each package ships them.",
    "",
    ...packages.map((pkg) => `- ${pkg.name} ${pkg.version} (${pkg.license})`)
  ]
  const sections = packages.map((pkg) =>
    [
      rule,
      `${pkg.name} ${pkg.version} (${pkg.license})`,
      rule,
      "",
      ...[...pkg.licenceFiles, ...pkg.noticeFiles].map((file) => readFileSync(file, "utf8").trim()),
      ""
    ].join("\n")
  )
  return `${[...head, "", ...sections].join("\n").trimEnd()}\n`
}

/**
 * Writes the notices of the bundle that `metafile` describes to `out` (atomically: a test may read it while a build
 * writes it), and the bundle's input files to `<workingDir>/build/bundle-inputs.json`. Returns the packages listed.
 */
export const writeNotices = (metafile, { workingDir, out, title }) => {
  const packages = embeddedPackages(metafile, workingDir)
  const text = noticesText(packages, { title })
  mkdirSync(dirname(out), { recursive: true })
  const staging = `${out}.tmp-${process.pid}`
  writeFileSync(staging, text)
  renameSync(staging, out)
  const inputs = join(workingDir, "build", "bundle-inputs.json")
  mkdirSync(dirname(inputs), { recursive: true })
  writeFileSync(
    `${inputs}.tmp-${process.pid}`,
    `${JSON.stringify({ notices: out, inputs: inputFiles(metafile, workingDir) }, null, 2)}\n`
  )
  renameSync(`${inputs}.tmp-${process.pid}`, inputs)
  return packages
}
