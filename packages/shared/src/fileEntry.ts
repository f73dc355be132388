/**
 * A token entry in a file, for both Effect lines: read leniently, written atomically (a temp file created
 * exclusively with mode 0600, renamed over the entry, in a 0700 directory), removed on sign-out.
 */
import { createHash } from "node:crypto"
import { constants } from "node:fs"
import * as fs from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { parseTokenJson, stringifyTokenJson, type TokenJson } from "./tokenJson.js"

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

/**
 * The entry's text: undefined when there is no file. Opened without following a link and without blocking (a FIFO
 * never hangs a caller); anything but a regular file is an error.
 */
export const readText = async (path: string): Promise<string | undefined> => {
  let handle: fs.FileHandle | undefined
  try {
    handle = await fs.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    const stat = await handle.stat()
    if (!stat.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EINVAL" })
    return await handle.readFile("utf8")
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined
    throw error
  } finally {
    await handle?.close()
  }
}

/** The entry, leniently: a missing, unreadable or invalid file is undefined. */
export const readEntry = async (path: string): Promise<TokenJson | undefined> => {
  try {
    const text = await readText(path)
    return text === undefined ? undefined : parseTokenJson(text)
  } catch {
    return undefined
  }
}

/**
 * The entry for a compare-and-set: undefined when there is no file (or it holds no valid entry); a file that is
 * there but cannot be read throws (it is not an empty entry, and must not be overwritten blindly).
 */
export const readEntryStrict = async (path: string): Promise<TokenJson | undefined> => {
  const text = await readText(path)
  return text === undefined ? undefined : parseTokenJson(text)
}

const randomSuffix = () => Math.floor(Math.random() * 2 ** 31).toString(36)

/** Temp files of `path` left by a crashed writer (older than this) are removed by the next write. */
export const STALE_TEMP_MILLIS = 60_000

/** Removes temp files of `path` older than {@link STALE_TEMP_MILLIS} (a crash between create and rename). */
const sweepTemps = async (path: string): Promise<void> => {
  const dir = dirname(path)
  const prefix = `${basename(path)}.`
  const names = await fs.readdir(dir).catch(() => [] as Array<string>)
  const now = Date.now()
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp") || name.endsWith(".lock")) continue
    const file = join(dir, name)
    const stat = await fs.lstat(file).catch(() => undefined)
    if (stat?.isFile() && now - stat.mtimeMs > STALE_TEMP_MILLIS) await fs.rm(file, { force: true }).catch(() => {})
  }
}

/**
 * Why `path` (a directory, or a file in it) must not hold tokens, or undefined when it may: it belongs to another
 * user, or another user can write it (they could replace the entry or read what it will hold; a sticky directory
 * such as /tmp is fine). Missing is fine.
 */
export const unsafeOwnership = async (path: string): Promise<string | undefined> => {
  const stat = await fs.lstat(path).catch(() => undefined)
  if (stat === undefined) return undefined
  const uid = process.getuid?.()
  if (uid !== undefined && stat.uid !== uid) return `${path} belongs to another user (uid ${stat.uid})`
  // a sticky directory (/tmp) lets others add files but not replace or remove ours
  const sticky = stat.isDirectory() && (stat.mode & 0o1000) !== 0
  if ((stat.mode & 0o022) !== 0 && !sticky) {
    return `${path} can be written by other users (mode ${(stat.mode & 0o777).toString(8)}): use a directory of your own (mode 0700)`
  }
  return undefined
}

/** Writes the entry atomically: temp file (exclusive, 0600) renamed over `path`; the temp file never stays. */
export const writeEntry = async (path: string, token: TokenJson): Promise<void> => {
  const dir = dirname(path)
  await fs.mkdir(dir, { recursive: true, mode: 0o700 })
  await sweepTemps(path)
  const tmp = join(dir, `${basename(path)}.${randomSuffix()}.tmp`)
  let created = false
  try {
    await fs.writeFile(tmp, stringifyTokenJson(token), { flag: "wx", mode: 0o600 })
    created = true
    await fs.chmod(tmp, 0o600)
    await fs.rename(tmp, path)
    created = false
  } finally {
    if (created) await fs.rm(tmp, { force: true }).catch(() => {})
  }
}

/** Removes the entry (sign-out) and any temp file of it: no copy of a refresh token stays behind. */
export const removeEntry = async (path: string): Promise<void> => {
  await fs.rm(path, { force: true })
  const prefix = `${basename(path)}.`
  for (const name of await fs.readdir(dirname(path)).catch(() => [] as Array<string>)) {
    if (name.startsWith(prefix) && name.endsWith(".tmp")) await fs.rm(join(dirname(path), name), { force: true })
  }
}

/**
 * The file name of a user's entry in a directory store: the hex SHA-256 of the id's UTF-16 code units. Fixed
 * length, only `[0-9a-f]`, so no id (`../x`, `a/b`, `.`, empty, huge, non-ASCII) leaves the directory, and distinct
 * ids get distinct names (UTF-16, not UTF-8: UTF-8 would map every lone surrogate to U+FFFD, and two ids to one file).
 */
export const userFileName = (userId: string): string =>
  `${createHash("sha256").update(userId, "utf16le").digest("hex")}.json`
