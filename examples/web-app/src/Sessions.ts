/**
 * Browser sessions, server-side: a random id in an `HttpOnly` cookie names a pending sign-in (state and PKCE verifier)
 * or a signed-in user. Records are keyed by a SHA-256 of the id, so the store never holds a usable cookie. In memory
 * by default, in Redis beside the `RedisTokenStore` when the app runs as several processes.
 *
 * @since 1.0.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Cluster, Redis } from "ioredis"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { TokenCacheError } from "@service-sdk/effect"

/**
 * A sign-in started by `/login` and not finished yet: what `completeAuthorization` needs.
 *
 * @since 1.0.0
 */
export interface PendingSignIn {
  readonly state: string
  readonly codeVerifier: Redacted.Redacted<string>
}

/**
 * What {@link SessionStore.takePending} found: the pending sign-in (now taken), none, or one with another state (left
 * in place).
 *
 * @since 1.0.0
 */
export type TakePending =
  | { readonly _tag: "Taken"; readonly pending: PendingSignIn }
  | { readonly _tag: "NotPending" }
  | { readonly _tag: "StateMismatch" }

const notPending: TakePending = { _tag: "NotPending" }
const stateMismatch: TakePending = { _tag: "StateMismatch" }

/** A hash of a state, so that stores compare states without a timing side channel on the state itself. */
const stateHash = (state: string): string => createHash("sha256").update(state).digest("base64url")

/**
 * @since 1.0.0
 */
export interface SessionStore {
  /** keeps a pending sign-in for this session, for `ttl` */
  readonly putPending: (
    sessionId: string,
    pending: PendingSignIn,
    ttl: Duration.Duration
  ) => Effect.Effect<void, TokenCacheError>
  /**
   * the pending sign-in of this session, removed as it is read (a callback is answered once, RFC 6749 §10.12), but
   * only when `state` is its state: a callback for another sign-in (forged, replayed, or an `error` without a state)
   * leaves it waiting for the real answer
   */
  readonly takePending: (sessionId: string, state: string) => Effect.Effect<TakePending, TokenCacheError>
  /** whether the session has a pending sign-in (without taking it) */
  readonly hasPending: (sessionId: string) => Effect.Effect<boolean, TokenCacheError>
  /** the session now belongs to this user, for `ttl` */
  readonly putUser: (sessionId: string, userId: string, ttl: Duration.Duration) => Effect.Effect<void, TokenCacheError>
  readonly getUser: (sessionId: string) => Effect.Effect<Option.Option<string>, TokenCacheError>
  /** forgets everything about the session */
  readonly remove: (sessionId: string) => Effect.Effect<void, TokenCacheError>
}

/**
 * @since 1.0.0
 */
export class Sessions extends Context.Tag("web-app/Sessions")<Sessions, SessionStore>() {}

/**
 * A new session id: 32 random bytes, base64url (43 characters).
 *
 * @since 1.0.0
 */
export const newSessionId = (): string => randomBytes(32).toString("base64url")

/**
 * Whether a cookie value has the shape of a session id (anything else is refused without a store lookup).
 *
 * @since 1.0.0
 */
export const isSessionId = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value)

const keyOf = (sessionId: string): string => createHash("sha256").update(sessionId).digest("base64url")

interface Entry {
  readonly value: string | PendingSignIn
  readonly expiresAt: number
}

/**
 * Sessions in this process's memory, at most `maxSessions` (default 100,000; the oldest go first), expired entries
 * dropped as they are met.
 *
 * @since 1.0.0
 */
export const memory = (options: { readonly maxSessions?: number } = {}): Effect.Effect<SessionStore> =>
  Effect.sync(() => {
    const max = options.maxSessions ?? 100_000
    const pending = new Map<string, Entry>()
    const users = new Map<string, Entry>()
    const put = (map: Map<string, Entry>, sessionId: string, value: Entry["value"], ttl: Duration.Duration) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const key = keyOf(sessionId)
        map.delete(key)
        map.set(key, { value, expiresAt: now + Duration.toMillis(ttl) })
        while (map.size > max) map.delete(map.keys().next().value!)
      })
    const read = (map: Map<string, Entry>, sessionId: string, take: boolean) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const key = keyOf(sessionId)
        const entry = map.get(key)
        if (entry !== undefined && (take || entry.expiresAt <= now)) map.delete(key)
        return entry === undefined || entry.expiresAt <= now ? Option.none() : Option.some(entry.value)
      })
    return {
      putPending: (sessionId, value, ttl) => put(pending, sessionId, value, ttl),
      takePending: (sessionId, state) =>
        Effect.map(read(pending, sessionId, false), (found): TakePending => {
          if (Option.isNone(found)) return notPending
          const value = found.value as PendingSignIn
          if (!timingSafeEqual(Buffer.from(stateHash(value.state)), Buffer.from(stateHash(state)))) return stateMismatch
          pending.delete(keyOf(sessionId))
          return { _tag: "Taken", pending: value }
        }),
      hasPending: (sessionId) => Effect.map(read(pending, sessionId, false), Option.isSome),
      putUser: (sessionId, userId, ttl) => put(users, sessionId, userId, ttl),
      getUser: (sessionId) =>
        Effect.map(
          read(users, sessionId, false),
          Option.map((value) => value as string)
        ),
      remove: (sessionId) =>
        Effect.sync(() => {
          const key = keyOf(sessionId)
          pending.delete(key)
          users.delete(key)
        })
    }
  })

/** Takes the pending sign-in at KEYS[1] when its state hash is ARGV[1]: the record, 1 for another state, 0 for none. */
const TAKE_PENDING = `
local raw = redis.call("GET", KEYS[1])
if not raw then return 0 end
local ok, record = pcall(cjson.decode, raw)
if not ok or type(record) ~= "table" or record.state_hash ~= ARGV[1] then return 1 end
redis.call("DEL", KEYS[1])
return raw
`

/**
 * Sessions in Redis under `<prefix>pending:` and `<prefix>user:` with a TTL; the pending sign-in is taken by one
 * script that compares its state's hash and deletes it, so two callbacks racing for one sign-in cannot both have it
 * and a callback with another state leaves it in place. The client is yours (never closed here).
 *
 * @since 1.0.0
 */
export const redis = (options: { readonly client: Redis | Cluster; readonly prefix: string }): SessionStore => {
  const { client, prefix } = options
  const run = <A>(operation: string, command: () => Promise<A>) =>
    Effect.tryPromise({
      try: command,
      // ioredis errors carry the command's arguments (the verifier): keep the message only
      catch: (cause) =>
        new TokenCacheError({
          message: `Redis session store: ${operation} failed`,
          cause: new Error(cause instanceof Error ? cause.message : "unknown error")
        })
    }).pipe(
      Effect.timeoutFail({
        duration: "5 seconds",
        onTimeout: () => new TokenCacheError({ message: `Redis session store: ${operation} timed out` })
      })
    )
  const pendingKey = (sessionId: string) => `${prefix}pending:${keyOf(sessionId)}`
  const userKey = (sessionId: string) => `${prefix}user:${keyOf(sessionId)}`
  return {
    putPending: (sessionId, pending, ttl) =>
      Effect.asVoid(
        run("put pending sign-in", () =>
          client.set(
            pendingKey(sessionId),
            JSON.stringify({
              state: pending.state,
              state_hash: stateHash(pending.state),
              code_verifier: Redacted.value(pending.codeVerifier)
            }),
            "PX",
            Duration.toMillis(ttl)
          )
        )
      ),
    takePending: (sessionId, state) =>
      Effect.map(
        run(
          "take pending sign-in",
          () => client.eval(TAKE_PENDING, 1, pendingKey(sessionId), stateHash(state)) as Promise<unknown>
        ),
        (raw): TakePending => {
          if (raw === 1) return stateMismatch
          if (typeof raw !== "string") return notPending
          try {
            const parsed = JSON.parse(raw) as { readonly state?: unknown; readonly code_verifier?: unknown }
            return typeof parsed.state === "string" && typeof parsed.code_verifier === "string"
              ? { _tag: "Taken", pending: { state: parsed.state, codeVerifier: Redacted.make(parsed.code_verifier) } }
              : notPending
          } catch {
            return notPending
          }
        }
      ),
    hasPending: (sessionId) =>
      Effect.map(
        run("read pending sign-in", () => client.exists(pendingKey(sessionId))),
        (count) => count > 0
      ),
    putUser: (sessionId, userId, ttl) =>
      Effect.asVoid(run("put session", () => client.set(userKey(sessionId), userId, "PX", Duration.toMillis(ttl)))),
    getUser: (sessionId) =>
      Effect.map(
        run("read session", () => client.get(userKey(sessionId))),
        Option.fromNullable
      ),
    remove: (sessionId) =>
      Effect.asVoid(run("remove session", () => client.del(pendingKey(sessionId), userKey(sessionId))))
  }
}
