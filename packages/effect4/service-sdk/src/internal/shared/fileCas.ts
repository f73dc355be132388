// Copied from packages/shared/src/fileCas.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * A file whose every change is a compare-and-set that is atomic on its own, whatever any lock did (issue 28; the
 * argument is in docs/decisions.md, 28.1 and 28.2). Used for the token entry and for its lock file, by both lines.
 *
 * - Every content we write carries a fresh random `revision`; a file without one is known by the hash of its text, an
 *   irregular one by its inode. A name never holds the same version twice.
 * - From "missing", a file is created by `link` of a complete temp file (exclusive: one creator).
 * - From version `v`, a writer first stages its change (a temp file holding the new content, or an empty temp
 *   directory that the old file will be moved into), then claims `<name>.claim-<v>-<k>` by an exclusive `link`
 *   (the claim names its staged change), checks that the name still holds `v`, and acts (one `rename`).
 * - A claim whose writer is gone, whose staged change is gone, or that outlived its TTL is cancelled: its staged
 *   change is destroyed first (the temp file unlinked, the temp directory removed while empty), and only then is the
 *   next claim `k + 1` taken. A cancelled writer's `rename` fails (ENOENT), so it can no longer act.
 * - Claims of a version are never removed while the name holds it; afterwards they are garbage.
 */
import { createHash, randomBytes } from "node:crypto"
import { basename, dirname } from "node:path"
import * as Ops from "./fileOps.js"
import { FileFailure, type Found, isCode, type Program } from "./fileOps.js"
import * as Safety from "./fileSafety.js"
import { describeCause } from "./redact.js"

/** What a name holds now, with the version a change must expect. */
export type Current = Found & { readonly version: string | undefined }

export type Outcome = "Won" | "Lost"

const REVISION = /^[0-9a-f]{8,64}$/

/** A fresh revision for a content written now. */
export const newRevision = (): string => randomBytes(12).toString("hex")

/** `text` (a JSON object) with a fresh `revision`: what a writer stores. */
export const withRevision = (text: string): string =>
  JSON.stringify({ ...(JSON.parse(text) as object), revision: newRevision() })

/** The version of what a name holds (none when missing). */
export const versionOf = (found: Found): string | undefined => {
  if (found._tag === "Missing") return undefined
  if (found._tag === "Irregular") return found.id
  try {
    const revision = (JSON.parse(found.text) as { revision?: unknown } | null)?.revision
    if (typeof revision === "string" && REVISION.test(revision)) return `r${revision}`
  } catch {
    // not JSON: known by its text
  }
  return `h${createHash("sha256").update(found.text).digest("hex").slice(0, 32)}`
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

export interface Options {
  /** A claim older than this (or than its own ttl) is stale. */
  readonly ttlMillis: number
  /** How long to wait for a live claim of another writer. */
  readonly waitMillis: number
}

/** What a claim says about its writer. */
interface Claim extends Partial<Safety.Identity> {
  readonly owner?: string
  readonly ttl?: number
  readonly staged?: string
  readonly kind?: "replace" | "remove"
}

export const FUTURE_SLACK_MS = 1000

const parseObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const json: unknown = JSON.parse(text)
    return typeof json === "object" && json !== null && !Array.isArray(json)
      ? (json as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

export const make = (name: string, options: Options) => {
  const dir = dirname(name)
  const base = basename(name)
  const tempPattern = new RegExp(`^${escape(base)}\\.([0-9a-z-]+)\\.tmp(dir)?$`)
  const claimPattern = new RegExp(`^${escape(base)}\\.claim-([0-9a-z]+)-(\\d+)$`)

  const fail = (what: string, cause: unknown) =>
    new FileFailure("cache", `${what} ${name}: ${describeCause(cause)}`, cause)

  function* read(): Program<Current> {
    const found = yield* Ops.read(name)
    return { ...found, version: versionOf(found) }
  }

  function* readVersion(): Program<string> {
    return (yield* read()).version ?? "missing"
  }

  /** Creates `path` holding `text` if nothing is there: `link` of a complete temp file. */
  function* createExclusive(path: string, text: string): Program<boolean> {
    const temp = `${name}.${Safety.uniqueId()}.tmp`
    try {
      try {
        yield* Ops.writeNew(temp, text)
      } catch (error) {
        throw fail("cannot write", error)
      }
      yield* Ops.link(temp, path)
      return true
    } catch (error) {
      if (error instanceof FileFailure) throw error
      // NotFound: our temp file was swept while we were paused; the caller reads what is there and tries again
      if (isCode(error, "EEXIST", "ENOENT")) return false
      throw fail("cannot write", error)
    } finally {
      yield* Ops.ignore(Ops.remove(temp))
    }
  }

  const stagedPath = (claim: Claim) =>
    typeof claim.staged === "string" && tempPattern.test(claim.staged) ? `${dir}/${claim.staged}` : undefined

  /** Whether a claim can no longer act, or may be cancelled: its writer gone, its change gone, or too old. */
  function* claimStale(found: Found, claim: Claim | undefined): Program<boolean> {
    if (found._tag !== "File" || claim === undefined) return true
    const time = yield* Ops.fileTime()
    if (found.mtimeMs > time + FUTURE_SLACK_MS) return true
    if (Safety.holderGone(claim)) return true
    const ttl = Math.min(
      typeof claim.ttl === "number" && claim.ttl > 0 ? claim.ttl : options.ttlMillis,
      options.ttlMillis
    )
    if (time > found.mtimeMs + ttl) return true
    const staged = stagedPath(claim)
    if (staged === undefined) return true
    try {
      return !(yield* Ops.exists(staged))
    } catch {
      return false
    }
  }

  const parseClaim = (found: Found): Claim | undefined => {
    if (found._tag !== "File") return undefined
    try {
      const claim = JSON.parse(found.text) as Claim | null
      return claim !== null && typeof claim === "object" && (claim.kind === "replace" || claim.kind === "remove")
        ? claim
        : undefined
    } catch {
      return undefined
    }
  }

  /** `rmdir`: "Removed", or "NotEmpty"/"Missing". */
  function* removeEmptyDirectory(path: string): Program<"Removed" | "NotEmpty" | "Missing"> {
    try {
      yield* Ops.rmdir(path)
      return "Removed"
    } catch (error) {
      if (isCode(error, "ENOENT")) return "Missing"
      if (isCode(error, "ENOTEMPTY", "EEXIST")) return "NotEmpty"
      throw fail("cannot remove the directory", error)
    }
  }

  /** Destroys a claim's staged change, so that its writer can never act; then its claim may be passed. */
  function* cancel(claim: Claim | undefined): Program<void> {
    if (claim === undefined) return
    const staged = stagedPath(claim)
    if (staged === undefined) return
    if (claim.kind === "remove") {
      yield* removeEmptyDirectory(staged)
      return
    }
    try {
      yield* Ops.remove(staged)
    } catch (error) {
      if (!isCode(error, "ENOENT")) throw fail("cannot cancel a stale write of", error)
    }
  }

  function* dropAll(paths: ReadonlyArray<string>): Program<void> {
    for (const path of paths) yield* Ops.ignore(Ops.remove(path))
  }

  /**
   * Claims the change from `version`, checks the name still holds it, and runs `act` (one rename). "Lost" when
   * another writer changed the name first, or cancelled us.
   */
  function* claimAndAct(
    version: string,
    staged: string,
    kind: "replace" | "remove",
    act: () => Program<Outcome>
  ): Program<Outcome> {
    const text = JSON.stringify({
      owner: basename(staged),
      ...Safety.self,
      ttl: options.ttlMillis,
      staged: basename(staged),
      kind
    })
    const start = yield* Ops.clock()
    let k = 0
    while (true) {
      const claimPath = `${name}.claim-${version}-${k}`
      if (yield* createExclusive(claimPath, text)) break
      const found = yield* Ops.read(claimPath)
      if (found._tag === "Missing") continue
      const claim = parseClaim(found)
      if (yield* claimStale(found, claim)) {
        yield* cancel(claim)
        k++
        continue
      }
      // another writer is acting on this version now: it wins, unless it is cancelled
      if ((yield* readVersion()) !== version) return "Lost"
      if ((yield* Ops.clock()) - start > options.waitMillis) {
        throw new FileFailure(
          "cache",
          `gave up waiting for another writer of ${name} (its claim ${claimPath} is still held)`
        )
      }
      yield* Ops.sleep(2 + Math.floor(Math.random() * 10))
    }
    const mine = Array.from({ length: k + 1 }, (_, j) => `${name}.claim-${version}-${j}`)
    if ((yield* readVersion()) !== version) {
      yield* dropAll(mine)
      return "Lost"
    }
    const outcome = yield* act()
    // after a win the name no longer holds `version`: its claims are garbage (after a cancellation they are not)
    if (outcome === "Won") yield* dropAll(mine)
    return outcome
  }

  function* renameOrLost(from: string, to: string): Program<Outcome> {
    try {
      yield* Ops.rename(from, to)
      return "Won"
    } catch (error) {
      if (isCode(error, "ENOENT")) return "Lost"
      throw fail("cannot write", error)
    }
  }

  /** Writes `text` if the name holds `from` (missing: created exclusively). */
  function* replace(from: Current, text: string): Program<Outcome> {
    const staged = `${name}.${Safety.uniqueId()}.tmp`
    try {
      try {
        yield* Ops.writeNew(staged, text)
      } catch (error) {
        throw fail("cannot write", error)
      }
      if (from.version === undefined) {
        try {
          yield* Ops.link(staged, name)
          return "Won"
        } catch (error) {
          // NotFound: the staged file was swept (we were paused past the TTL), as a cancellation would
          if (isCode(error, "EEXIST", "ENOENT")) return "Lost"
          throw fail("cannot write", error)
        }
      }
      return yield* claimAndAct(from.version, staged, "replace", () => renameOrLost(staged, name))
    } finally {
      yield* Ops.ignore(Ops.remove(staged))
    }
  }

  /** Removes the name if it holds `from`: moved into a staged directory of ours, then deleted. */
  function* remove(from: Current): Program<Outcome> {
    const version = from.version
    if (version === undefined) return "Won"
    const staged = `${name}.${Safety.uniqueId()}.tmpdir`
    try {
      try {
        yield* Ops.mkdir(staged, false)
      } catch (error) {
        throw fail("cannot remove", error)
      }
      return yield* claimAndAct(version, staged, "remove", () => renameOrLost(name, `${staged}/entry`))
    } finally {
      yield* Ops.ignore(Ops.remove(staged, true))
    }
  }

  /**
   * Sweeps what crashed writers left: temp files and directories (all of them with `all`, e.g. on sign-out: a
   * writer under way is cancelled, which is what a sign-out means; else those whose writer is provably gone or that
   * are older than the TTL), and claims of versions the name no longer holds. Never fails.
   */
  function* sweep(all: boolean, how: { readonly republish?: boolean } = {}): Program<void> {
    yield* Ops.ignore(sweepOnce(all, how))
  }

  function* sweepOnce(all: boolean, how: { readonly republish?: boolean }): Program<void> {
    const names = yield* Ops.readdir(dir)
    const time = yield* Ops.fileTime()
    const claims: Array<{ readonly path: string; readonly version: string }> = []
    for (const entry of names) {
      const path = `${dir}/${entry}`
      const claim = claimPattern.exec(entry)
      if (claim !== null) {
        claims.push({ path, version: claim[1]! })
        continue
      }
      const temp = tempPattern.exec(entry)
      if (temp === null) continue
      if (!all && !Safety.tempWriterGone(temp[1]!)) {
        let mtime = time
        try {
          mtime = yield* Ops.mtime(path)
        } catch {
          // gone already
        }
        if (time - mtime <= options.ttlMillis && mtime <= time + FUTURE_SLACK_MS) continue
      }
      // an empty staged directory is removed as a cancellation would; a full one holds an old entry: deleted
      if (temp[2] !== undefined) {
        let emptied = false
        try {
          emptied = (yield* removeEmptyDirectory(path)) === "Removed"
        } catch {
          // not removable as empty: deleted below
        }
        if (!emptied) yield* Ops.ignore(Ops.remove(path, true))
      } else {
        yield* Ops.ignore(Ops.remove(path))
      }
    }
    if (claims.length === 0) return
    // listed first, read after: a claim of the version read now was never judged garbage
    const current = yield* read()
    const version = current.version ?? "missing"
    yield* dropAll(claims.filter((claim) => claim.version !== version).map((claim) => claim.path))
    // claims of the current version (a writer killed while it held one) are never removed: the same content is
    // written again under a new revision (passing them by the claim rule), after which they are garbage
    if (how.republish === true && current._tag === "File" && claims.some((claim) => claim.version === version)) {
      const json = parseObject(current.text)
      if (json !== undefined) {
        const outcome = yield* replace(current, JSON.stringify({ ...json, revision: newRevision() }))
        if (outcome === "Won") yield* dropAll(claims.map((claim) => claim.path))
      }
    }
  }

  return { name, read, replace, remove, sweep }
}

export type FileCas = ReturnType<typeof make>
