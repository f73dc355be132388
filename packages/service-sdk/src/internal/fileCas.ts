/**
 * A file whose every change is a compare-and-set that is atomic on its own, whatever any lock did (issue 28; the
 * argument is in docs/decisions.md, 28.1). Used for the token entry and for its lock file.
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
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import { createHash, randomBytes } from "node:crypto"
import { basename, dirname } from "node:path"
import { type ConfigurationError, TokenCacheError } from "../ServiceError.js"
import * as Safety from "./fileSafety.js"
import { describeCause, safeCause } from "./redact.js"

/** What a name holds now, with the version a change must expect. */
export type Current = Safety.Found & { readonly version: string | undefined }

export type Outcome = "Won" | "Lost"

export type CasError = TokenCacheError | ConfigurationError

const REVISION = /^[0-9a-f]{8,64}$/

/** A fresh revision for a content written now. */
export const newRevision = (): string => randomBytes(12).toString("hex")

/** The version of what a name holds (none when missing). */
export const versionOf = (found: Safety.Found): string | undefined => {
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

const isReason = (cause: unknown, reason: string) =>
  typeof cause === "object" && cause !== null && (cause as { _tag?: string; reason?: string })._tag === "SystemError"
    ? (cause as { reason?: string }).reason === reason
    : false

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

const FUTURE_SLACK_MS = 1000

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

export const make = (fs: FileSystem.FileSystem, name: string, options: Options) => {
  const dir = dirname(name)
  const base = basename(name)
  const tempPattern = new RegExp(`^${escape(base)}\\.([0-9a-z-]+)\\.tmp(dir)?$`)
  const claimPattern = new RegExp(`^${escape(base)}\\.claim-([0-9a-z]+)-(\\d+)$`)

  const fail = (what: string, cause: unknown) =>
    new TokenCacheError({ message: `${what} ${name}: ${describeCause(cause)}`, cause: safeCause(cause) })

  const read: Effect.Effect<Current, CasError> = Effect.map(Safety.readFile(name), (found) => ({
    ...found,
    version: versionOf(found)
  }))

  const readVersion = Effect.map(read, (current) => current.version ?? "missing")

  /** Creates `path` holding `text` if nothing is there: `link` of a complete temp file. */
  const createExclusive = (path: string, text: string): Effect.Effect<boolean, CasError> => {
    const temp = `${name}.${Safety.uniqueId()}.tmp`
    return Effect.gen(function* () {
      yield* fs.writeFileString(temp, text, { flag: "wx", mode: 0o600 })
      return yield* fs.link(temp, path).pipe(
        Effect.as(true),
        // NotFound: our temp file was swept while we were paused; the caller reads what is there and tries again
        Effect.catchIf(
          (cause) => isReason(cause, "AlreadyExists") || isReason(cause, "NotFound"),
          () => Effect.succeed(false)
        )
      )
    }).pipe(
      Effect.ensuring(fs.remove(temp).pipe(Effect.ignore)),
      Effect.mapError((cause) => fail("cannot write", cause))
    )
  }

  const now = Effect.sync(() => Date.now())

  /** Whether a claim can no longer act, or may be cancelled: its writer gone, its change gone, or too old. */
  const claimStale = (found: Safety.Found, claim: Claim | undefined) =>
    Effect.gen(function* () {
      if (found._tag !== "File" || claim === undefined) return true
      const time = yield* now
      if (found.mtimeMs > time + FUTURE_SLACK_MS) return true
      if (Safety.holderGone(claim)) return true
      const ttl = Math.min(
        typeof claim.ttl === "number" && claim.ttl > 0 ? claim.ttl : options.ttlMillis,
        options.ttlMillis
      )
      if (time > found.mtimeMs + ttl) return true
      const staged = stagedPath(claim)
      if (staged === undefined) return true
      return !(yield* fs.exists(staged).pipe(Effect.orElseSucceed(() => true)))
    })

  const stagedPath = (claim: Claim) =>
    typeof claim.staged === "string" && tempPattern.test(claim.staged) ? `${dir}/${claim.staged}` : undefined

  const parseClaim = (found: Safety.Found): Claim | undefined => {
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

  /** Destroys a claim's staged change, so that its writer can never act; then its claim may be passed. */
  const cancel = (claim: Claim | undefined): Effect.Effect<void, CasError> => {
    if (claim === undefined) return Effect.void
    const staged = stagedPath(claim)
    if (staged === undefined) return Effect.void
    return claim.kind === "remove"
      ? Effect.asVoid(Safety.removeEmptyDirectory(staged))
      : fs.remove(staged).pipe(
          Effect.catchIf(
            (cause) => isReason(cause, "NotFound"),
            () => Effect.void
          ),
          Effect.mapError((cause) => fail("cannot cancel a stale write of", cause))
        )
  }

  const pause = Effect.flatMap(Random.nextIntBetween(2, 12), (millis) => Effect.sleep(Duration.millis(millis)))

  /**
   * Claims the change from `version`, checks the name still holds it, and runs `act` (one rename). "Lost" when
   * another writer changed the name first, or cancelled us.
   */
  const claimAndAct = (
    version: string,
    staged: string,
    kind: "replace" | "remove",
    act: Effect.Effect<Outcome, CasError>
  ): Effect.Effect<Outcome, CasError> =>
    Effect.gen(function* () {
      const text = JSON.stringify({
        owner: basename(staged),
        ...Safety.self(),
        ttl: options.ttlMillis,
        staged: basename(staged),
        kind
      })
      const start = yield* Clock.currentTimeMillis
      let k = 0
      while (true) {
        const claimPath = `${name}.claim-${version}-${k}`
        if (yield* createExclusive(claimPath, text)) break
        const found = yield* Safety.readFile(claimPath)
        if (found._tag === "Missing") continue
        const claim = parseClaim(found)
        if (yield* claimStale(found, claim)) {
          yield* cancel(claim)
          k++
          continue
        }
        // another writer is acting on this version now: it wins, unless it is cancelled
        if ((yield* readVersion) !== version) return "Lost"
        if ((yield* Clock.currentTimeMillis) - start > options.waitMillis) {
          return yield* new TokenCacheError({
            message: `gave up waiting for another writer of ${name} (its claim ${claimPath} is still held)`
          })
        }
        yield* pause
      }
      const mine = Array.from({ length: k + 1 }, (_, j) => `${name}.claim-${version}-${j}`)
      const dropClaims = Effect.forEach(mine, (path) => fs.remove(path).pipe(Effect.ignore), { discard: true })
      if ((yield* readVersion) !== version) {
        yield* dropClaims
        return "Lost"
      }
      const outcome = yield* act
      // after a win the name no longer holds `version`: its claims are garbage (after a cancellation they are not)
      if (outcome === "Won") yield* dropClaims
      return outcome
    })

  const renameOrLost = (from: string, to: string): Effect.Effect<Outcome, CasError> =>
    fs.rename(from, to).pipe(
      Effect.as<Outcome>("Won"),
      Effect.catchIf(
        (cause) => isReason(cause, "NotFound"),
        () => Effect.succeed<Outcome>("Lost")
      ),
      Effect.mapError((cause) => fail("cannot write", cause))
    )

  /** Writes `text` if the name holds `from` (missing: created exclusively). */
  const replace = (from: Current, text: string): Effect.Effect<Outcome, CasError> => {
    const staged = `${name}.${Safety.uniqueId()}.tmp`
    return Effect.gen(function* () {
      yield* fs
        .writeFileString(staged, text, { flag: "wx", mode: 0o600 })
        .pipe(Effect.mapError((cause) => fail("cannot write", cause)))
      if (from.version === undefined) {
        return yield* fs.link(staged, name).pipe(
          Effect.as<Outcome>("Won"),
          // NotFound: the staged file was swept (we were paused past the TTL), as a cancellation would
          Effect.catchIf(
            (cause) => isReason(cause, "AlreadyExists") || isReason(cause, "NotFound"),
            () => Effect.succeed<Outcome>("Lost")
          ),
          Effect.mapError((cause) => fail("cannot write", cause))
        )
      }
      return yield* claimAndAct(from.version, staged, "replace", renameOrLost(staged, name))
    }).pipe(Effect.ensuring(fs.remove(staged).pipe(Effect.ignore)))
  }

  /** Removes the name if it holds `from`: moved into a staged directory of ours, then deleted. */
  const remove = (from: Current): Effect.Effect<Outcome, CasError> => {
    if (from.version === undefined) return Effect.succeed("Won")
    const staged = `${name}.${Safety.uniqueId()}.tmpdir`
    return Effect.gen(function* () {
      yield* fs.makeDirectory(staged, { mode: 0o700 }).pipe(Effect.mapError((cause) => fail("cannot remove", cause)))
      return yield* claimAndAct(from.version!, staged, "remove", renameOrLost(name, `${staged}/entry`))
    }).pipe(Effect.ensuring(fs.remove(staged, { recursive: true }).pipe(Effect.ignore)))
  }

  /**
   * Sweeps what crashed writers left: temp files and directories (all of them with `all`, e.g. on sign-out: a
   * writer under way is cancelled, which is what a sign-out means; else those whose writer is provably gone or that
   * are older than the TTL), and claims of versions the name no longer holds. Never fails.
   */
  const sweep = (all: boolean, how: { readonly republish?: boolean } = {}): Effect.Effect<void> =>
    Effect.gen(function* () {
      const names = yield* fs.readDirectory(dir)
      const time = yield* now
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
          const info = yield* Effect.option(fs.stat(path))
          const mtime =
            info._tag === "Some" && info.value.mtime._tag === "Some" ? info.value.mtime.value.getTime() : time
          if (time - mtime <= options.ttlMillis && mtime <= time + FUTURE_SLACK_MS) continue
        }
        // an empty staged directory is removed as a cancellation would; a full one holds an old entry: deleted
        if (temp[2] !== undefined && (yield* Effect.either(Safety.removeEmptyDirectory(path)))._tag === "Right") {
          yield* fs.remove(path, { recursive: true }).pipe(Effect.ignore)
        } else if (temp[2] === undefined) {
          yield* fs.remove(path).pipe(Effect.ignore)
        }
      }
      if (claims.length === 0) return
      // listed first, read after: a claim of the version read now was never judged garbage
      const current = yield* read
      const version = current.version ?? "missing"
      yield* Effect.forEach(
        claims.filter((claim) => claim.version !== version),
        (claim) => fs.remove(claim.path).pipe(Effect.ignore),
        { discard: true }
      )
      // claims of the current version (a writer killed while it held one) are never removed: the same content is
      // written again under a new revision (passing them by the claim rule), after which they are garbage
      if (how.republish === true && current._tag === "File" && claims.some((claim) => claim.version === version)) {
        const json = parseObject(current.text)
        if (json !== undefined) {
          const outcome = yield* replace(current, JSON.stringify({ ...json, revision: newRevision() }))
          if (outcome === "Won")
            yield* Effect.forEach(claims, (claim) => fs.remove(claim.path).pipe(Effect.ignore), { discard: true })
        }
      }
    }).pipe(Effect.ignore)

  return { name, read, replace, remove, sweep }
}

export type FileCas = ReturnType<typeof make>
