/**
 * Browser sessions, server-side: a random id in an `HttpOnly` cookie names a pending sign-in (state and PKCE verifier)
 * or a signed-in user. Records are keyed by a SHA-256 of the id, so the store never holds a usable cookie. In memory
 * by default, in Redis beside the `RedisTokenStore` when the app runs as several processes.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Cluster, Redis } from "ioredis"
import { createHash, randomBytes } from "node:crypto"
import { TokenCacheError } from "service-sdk"

/**
 * A sign-in started by `/login` and not finished yet: what `completeAuthorization` needs.
 *
 * @since 0.1.0
 */
export interface PendingSignIn {
  readonly state: string
  readonly codeVerifier: Redacted.Redacted<string>
}

/**
 * @since 0.1.0
 */
export interface SessionStore {
  /** keeps a pending sign-in for this session, for `ttl` */
  readonly putPending: (
    sessionId: string,
    pending: PendingSignIn,
    ttl: Duration.Duration
  ) => Effect.Effect<void, TokenCacheError>
  /** the pending sign-in of this session, removed as it is read (a callback is answered once, RFC 6749 §10.12) */
  readonly takePending: (sessionId: string) => Effect.Effect<Option.Option<PendingSignIn>, TokenCacheError>
  /** whether the session has a pending sign-in (without taking it) */
  readonly hasPending: (sessionId: string) => Effect.Effect<boolean, TokenCacheError>
  /** the session now belongs to this user, for `ttl` */
  readonly putUser: (sessionId: string, userId: string, ttl: Duration.Duration) => Effect.Effect<void, TokenCacheError>
  readonly getUser: (sessionId: string) => Effect.Effect<Option.Option<string>, TokenCacheError>
  /** forgets everything about the session */
  readonly remove: (sessionId: string) => Effect.Effect<void, TokenCacheError>
}

/**
 * @since 0.1.0
 */
export class Sessions extends Context.Tag("web-app/Sessions")<Sessions, SessionStore>() {}

/**
 * A new session id: 32 random bytes, base64url (43 characters).
 *
 * @since 0.1.0
 */
export const newSessionId = (): string => randomBytes(32).toString("base64url")

/**
 * Whether a cookie value has the shape of a session id (anything else is refused without a store lookup).
 *
 * @since 0.1.0
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
 * @since 0.1.0
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
      takePending: (sessionId) =>
        Effect.map(
          read(pending, sessionId, true),
          Option.map((value) => value as PendingSignIn)
        ),
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

/**
 * Sessions in Redis under `<prefix>pending:` and `<prefix>user:` with a TTL; the pending sign-in is taken with
 * `GETDEL`, so two callbacks racing for one sign-in cannot both have it. The client is yours (never closed here).
 *
 * @since 0.1.0
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
            JSON.stringify({ state: pending.state, code_verifier: Redacted.value(pending.codeVerifier) }),
            "PX",
            Duration.toMillis(ttl)
          )
        )
      ),
    takePending: (sessionId) =>
      Effect.map(
        run("take pending sign-in", () => client.getdel(pendingKey(sessionId))),
        (raw): Option.Option<PendingSignIn> => {
          if (raw === null) return Option.none()
          try {
            const parsed = JSON.parse(raw) as { readonly state?: unknown; readonly code_verifier?: unknown }
            return typeof parsed.state === "string" && typeof parsed.code_verifier === "string"
              ? Option.some({ state: parsed.state, codeVerifier: Redacted.make(parsed.code_verifier) })
              : Option.none()
          } catch {
            return Option.none()
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
