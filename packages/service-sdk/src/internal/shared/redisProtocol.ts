// Copied from packages/shared/src/redisProtocol.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The Redis protocol of the shared token cache, one for both Effect lines (processes of both may share one Redis):
 * the key names, the entry's time to live, and the Lua scripts (compare-and-set of the entry, the lock's acquire,
 * release and extend). The lock's value is its owner's id (a random UUID); the entry is the stored token JSON.
 */

/** The lock key of an entry key. */
export const lockKey = (key: string): string => `${key}:lock`

const SAFE = /[A-Za-z0-9_.@-]/

/** A user id as a key suffix: safe characters as they are, any other UTF-16 unit as `%xxxx` (injective). */
export const encodeUserId = (userId: string): string => {
  let out = ""
  for (let i = 0; i < userId.length; i++) {
    const char = userId[i]!
    out += SAFE.test(char) ? char : `%${userId.charCodeAt(i).toString(16).padStart(4, "0")}`
  }
  return out
}

/** The entry key of a user in a store with `prefix`. */
export const userKey = (prefix: string, userId: string): string => `${prefix}${encodeUserId(userId)}`

/** An entry without a refresh token outlives its access token by this much (other hosts' clocks may lag). */
export const EXPIRY_GRACE_MILLIS = 60_000

/**
 * How long Redis keeps an entry, in milliseconds, or `undefined` for no expiry. An entry with a refresh token never
 * expires: the refresh token must outlive the access token.
 */
export const entryTtlMillis = (
  hasRefreshToken: boolean,
  expiresAtSeconds: number,
  nowMillis: number
): number | undefined =>
  hasRefreshToken ? undefined : Math.max(1000, Math.ceil(expiresAtSeconds * 1000 - nowMillis) + EXPIRY_GRACE_MILLIS)

/** How often a holder extends its lock: every third of its TTL, and at least once a second. */
export const heartbeatInterval = (ttlMillis: number): number => Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))

/** The Lua scripts, for ioredis' `defineCommand` (sent by SHA, `EVALSHA`, with a fallback to `EVAL`). */
export const SCRIPTS = {
  /**
   * compareAndSet: KEYS[1] the entry; ARGV[1] the expected entry ("" for none), ARGV[2] the new entry, ARGV[3] its
   * time to live in ms ("0": none). Writes only if the entry still has the expected access and refresh token
   * (whatever mark was added since), or, for none, is gone; 1 when written, 0 when the entry changed.
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
  /** Takes the lock KEYS[1] for ARGV[1] for ARGV[2] ms if it is free, or if ARGV[1] has it already (a resent try). */
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
  /** Extends the lock KEYS[1] to ARGV[2] ms if ARGV[1] owns it, or takes it again if it is gone. */
  serviceSdkLockExtend: {
    numberOfKeys: 1,
    lua: `local owner = redis.call("get", KEYS[1])
if owner == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end
if owner == false then redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end
return 0`
  }
} as const

export type ScriptName = keyof typeof SCRIPTS
