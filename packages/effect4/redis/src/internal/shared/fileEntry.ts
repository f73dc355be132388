// Copied from packages/shared/src/fileEntry.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
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

/** Writes the entry atomically: temp file (exclusive, 0600) renamed over `path`; the temp file never stays. */
export const writeEntry = async (path: string, token: TokenJson): Promise<void> => {
  const dir = dirname(path)
  await fs.mkdir(dir, { recursive: true, mode: 0o700 })
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

/** Removes the entry (sign-out); a missing file is already clear. */
export const removeEntry = async (path: string): Promise<void> => {
  await fs.rm(path, { force: true })
}

/**
 * The file name of a user's entry in a directory store: the hex SHA-256 of the id's UTF-16 code units. Fixed
 * length, only `[0-9a-f]`, so no id (`../x`, `a/b`, `.`, empty, huge, non-ASCII) leaves the directory, and distinct
 * ids get distinct names (UTF-16, not UTF-8: UTF-8 would map every lone surrogate to U+FFFD, and two ids to one file).
 */
export const userFileName = (userId: string): string =>
  `${createHash("sha256").update(userId, "utf16le").digest("hex")}.json`
