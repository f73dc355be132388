/**
 * The Redis wire protocol of the cache, with no Effect in it: the Lua scripts (the same text as the Effect 3 line's,
 * so that processes of both lines share one lock and one entry on one Redis; a test compares their SHA1s), how long
 * an entry lives, and how failures are described without credentials or command arguments.
 */
import type { Cluster, Redis } from "ioredis"

/**
 * The Lua scripts of the cache, defined on the client with ioredis' `defineCommand` (sent by SHA, `EVALSHA`, with a
 * fallback to `EVAL` when Redis does not know the script yet).
 */
export const SCRIPTS = {
  /**
   * `TokenCache.compareAndSet`: KEYS[1] the entry; ARGV[1] the expected entry ("" for none), ARGV[2] the new entry,
   * ARGV[3] its time to live in ms ("0": none). Writes only if the entry still has the expected access and refresh
   * token (whatever mark was added since), or, for none, is gone; 1 when written, 0 when the entry changed.
   */
  serviceSdkTokenCas: {
    numberOfKeys: 1,
    lua: `local current = redis.call("get", KEYS[1])
local same
if ARGV[1] == "" then
  same = current == false
elseif current == false then
  same = false
else
  local okA, a = pcall(cjson.decode, current)
  local okB, b = pcall(cjson.decode, ARGV[1])
  same = okA and okB and type(a) == "table" and type(b) == "table"
    and a.access_token == b.access_token and a.refresh_token == b.refresh_token
end
if not same then return 0 end
if ARGV[3] == "0" then redis.call("set", KEYS[1], ARGV[2]) else redis.call("set", KEYS[1], ARGV[2], "PX", ARGV[3]) end
return 1`
  },
  /**
   * Takes the lock KEYS[1] for ARGV[1] for ARGV[2] ms if it is free (`SET NX PX`), or if ARGV[1] has it already (a
   * try whose reply was lost, sent again): 1 when ARGV[1] holds it. A lock without an expiry (never ours: ours always
   * have one) is given one, so no lock is waited on for longer than its TTL.
   */
  serviceSdkLockAcquire: {
    numberOfKeys: 1,
    lua: `local owner = redis.call("get", KEYS[1])
if owner == false then redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end
if owner == ARGV[1] then redis.call("pexpire", KEYS[1], ARGV[2]) return 1 end
if redis.call("pttl", KEYS[1]) < 0 then redis.call("pexpire", KEYS[1], ARGV[2]) end
return 0`
  },
  /** Deletes the lock KEYS[1] only if ARGV[1] owns it. */
  serviceSdkLockRelease: {
    numberOfKeys: 1,
    lua: `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`
  },
  /**
   * Extends the lock KEYS[1] to ARGV[2] ms if ARGV[1] owns it, or takes it again if it is gone (a FLUSHALL, a
   * restarted Redis): 1 while it is ARGV[1]'s, 0 when another owner has it.
   */
  serviceSdkLockExtend: {
    numberOfKeys: 1,
    lua: `local owner = redis.call("get", KEYS[1])
if owner == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end
if owner == false then redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end
return 0`
  }
} as const

export type ScriptName = keyof typeof SCRIPTS

/** The commands the cache sends; ioredis' `Redis` and `Cluster` both have them. */
export interface Commands {
  get(key: string): Promise<string | null>
  del(key: string): Promise<number>
  set(key: string, value: string): Promise<"OK">
  set(key: string, value: string, px: "PX", milliseconds: number): Promise<"OK">
}

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
