/**
 * The Redis side of the cache with no Effect in it: how the Lua scripts of `scripts.ts` are defined and run, how long
 * an entry lives, how a neighbour's value and a failure are described (without credentials or command arguments).
 * `scripts.ts` is the Effect 3 line's file byte for byte (a test compares them), so that processes of both lines
 * share one lock and one entry on one Redis.
 */
import type { Cluster, Redis } from "ioredis"
import { SCRIPTS, type ScriptName } from "./scripts.js"

export { SCRIPTS, type ScriptName }


/** A client with the scripts defined: ioredis' `Redis` or `Cluster` (the cache sends nothing but its scripts). */
export type Commands = Redis | Cluster

/** Defines the scripts on a client (once: a borrowed client may serve several caches, of either line). */
export const defineScripts = (client: Redis | Cluster): void => {
  for (const [name, definition] of Object.entries(SCRIPTS)) {
    if (typeof (client as unknown as Record<string, unknown>)[name] !== "function") {
      client.defineCommand(name, definition)
    }
  }
}

/** Runs a script defined by {@link defineScripts}. */
export const script = (
  commands: Commands,
  name: ScriptName,
  key: string,
  ...args: ReadonlyArray<string | number>
): Promise<unknown> =>
  (commands as unknown as Record<ScriptName, (...args: ReadonlyArray<string | number>) => Promise<unknown>>)[name](
    key,
    ...args
  )

/**
 * How a key that holds another application's value is described: service-sdk never overwrites, re-times or deletes
 * a value it did not write.
 */
export const neighbourMessage = (address: string, key: string, kind: string, ours: "token entry" | "lock"): string =>
  `the Redis key "${key}" on ${address} holds another application's value ` +
  `(${kind === "string" ? `a string that is not a service-sdk ${ours}` : `a ${kind}`}): service-sdk never ` +
  "overwrites, re-times or deletes a value it did not write; give the cache a key (or prefix) of its own, or " +
  "delete that key if nothing uses it"

/** An entry without a refresh token outlives its access token by this much (other hosts' clocks may lag). */
export const EXPIRY_GRACE_MILLIS = 60_000

/**
 * How long Redis keeps an entry, in milliseconds, or `undefined` for no expiry. An entry with a refresh token never
 * expires: the refresh token must outlive the access token, or a user-scoped provider would have to sign in again.
 */
export const entryTtlMillis = (hasRefreshToken: boolean, expiresAt: number, nowMillis: number): number | undefined =>
  hasRefreshToken ? undefined : Math.max(1000, Math.ceil(expiresAt * 1000 - nowMillis) + EXPIRY_GRACE_MILLIS)

/** How often a holder extends its lock: every third of its TTL, and at least once a second. */
export const heartbeatInterval = (ttlMillis: number): number => Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))

/** A one-line description of a Redis failure: the message (and code) only, never the command and its arguments. */
export const describeFailure = (cause: unknown, secrets: ReadonlyArray<string> = []): string => {
  let text =
    cause instanceof Error
      ? cause.message
      : typeof cause === "object" && cause !== null && "message" in cause
        ? String(cause.message)
        : String(cause)
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  if (code !== undefined && code !== "undefined" && !text.includes(code)) text = `${text} (${code})`
  for (const secret of secrets) {
    if (secret !== "") text = text.split(secret).join("***")
  }
  return text === "" ? "unknown failure" : text
}

/** A plain Error standing in for a Redis failure as an error's `cause` (ioredis errors carry the command's arguments). */
export const safeCause = (cause: unknown, secrets: ReadonlyArray<string> = []): Error => {
  const error = new Error(describeFailure(cause, secrets))
  error.name = cause instanceof Error ? cause.name : "RedisError"
  return error
}

/** Where a borrowed client points, without credentials. */
export const describeClient = (client: Redis | Cluster): string => {
  if (client.isCluster) return "a Redis cluster"
  const options = (client as Redis).options
  if (options.path !== undefined && options.path !== null && options.path !== "") return `redis+unix://${options.path}`
  if (options.sentinels !== undefined && options.sentinels !== null && options.sentinels.length > 0) {
    return `the Redis sentinel group ${JSON.stringify(options.name ?? "")}`
  }
  const scheme = options.tls === undefined ? "redis" : "rediss"
  return `${scheme}://${options.host ?? "127.0.0.1"}:${options.port ?? 6379}${options.db ? `/${options.db}` : ""}`
}

/**
 * Whether a failure is Redis being away for a while (a reconnection, a failover, a cluster re-electing a master)
 * rather than an answer: such a command is tried again until its deadline. Every command the cache sends may run
 * twice (the lock's scripts are keyed by owner, the compare-and-set compares), so a retry never does harm.
 */
export const isTransient = (cause: unknown): boolean => {
  const message = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : ""
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""
  if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTCONN)$/.test(code)) return true
  if (/^(CLUSTERDOWN|TRYAGAIN|LOADING|READONLY|MASTERDOWN|NOREPLICAS|UNBLOCKED)\b/.test(message)) return true
  return (
    /Stream isn't writeable|Connection is closed|max retries per request|Cluster isn't ready|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|All sentinels are unreachable|Command timed out|ECONNREFUSED|ECONNRESET/.test(
      message
    ) ||
    (cause instanceof Error && cause.name === "ClusterAllFailedError")
  )
}

const SAFE = /[A-Za-z0-9_.@-]/

/**
 * A user id as a key part: `A-Z a-z 0-9 _ . @ -` as is, every other UTF-16 code unit as `%` and four hex digits.
 * Injective (`%` itself is encoded) and free of `:`, so no id reaches another user's key or a lock key.
 */
export const encodeUserId = (userId: string): string => {
  let out = ""
  for (let i = 0; i < userId.length; i++) {
    const char = userId[i]!
    out += SAFE.test(char) ? char : `%${userId.charCodeAt(i).toString(16).padStart(4, "0")}`
  }
  return out
}
