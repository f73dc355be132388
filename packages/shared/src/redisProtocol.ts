/**
 * The Redis protocol of the shared token cache, one for both Effect lines (processes of both may share one Redis):
 * the key names, the entry's time to live, and the Lua scripts (the entry's get, set, compare-and-set, keep and clear;
 * the lock's acquire, release and extend). The lock's value is its owner's id (a random UUID); the entry is the stored
 * token JSON.
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

/**
 * The Lua scripts, for ioredis' `defineCommand` (sent by SHA, `EVALSHA`, with a fallback to `EVAL`): one per
 * operation and one key per script (so Redis Cluster needs no hash tags). Both lines' Redis packages define these
 * (each imports its copy of this module), so they send the same SHA1s and behave alike on one Redis.
 *
 * Neighbours: a key may hold another application's value (another type, or a string that is not ours). The scripts
 * never delete, re-time or overwrite such a value: they answer with its type instead (a string reply, or the first
 * element of an array reply), which the cache turns into a TokenCacheError naming the key.
 */
/**
 * `entry(key)`: false when the key is empty; the decoded entry and its text when it holds one of ours (a JSON object
 * with an `access_token` field, valid or not); nil and the Redis type when it holds another application's value.
 * `replicas()`: how many replicas the server has now (0 when it cannot say), to know whether `WAIT` makes sense.
 * `write(key, json, ttl)`: SET, with PX unless `ttl` is "0".
 */
const ENTRY = `local function entry(key)
  local kind = redis.call("type", key).ok
  if kind == "none" then return false end
  if kind ~= "string" then return nil, kind end
  local text = redis.call("get", key)
  local ok, value = pcall(cjson.decode, text)
  if ok and type(value) == "table" and value.access_token ~= nil then return value, text end
  return nil, "string"
end
local function replicas()
  local info = redis.pcall("info", "replication")
  if type(info) ~= "string" then return 0 end
  return tonumber(string.match(info, "connected_slaves:(%d+)")) or 0
end
local function write(key, json, ttl)
  if ttl == "0" then redis.call("set", key, json) else redis.call("set", key, json, "PX", ttl) end
end
`

/**
 * `lock(key)`: false when free; the owner when it holds one of ours (an owner id is a UUID); nil and the Redis type
 * when it holds another application's value.
 */
const LOCK = `local function lock(key)
  local kind = redis.call("type", key).ok
  if kind == "none" then return false end
  if kind ~= "string" then return nil, kind end
  local owner = redis.call("get", key)
  if string.match(owner, "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$") then
    return owner
  end
  return nil, "string"
end
`

export const SCRIPTS = {
  /** `TokenCache.get`: the entry's text, null when empty, or `[type]` for another application's value. */
  serviceSdkTokenGet: {
    numberOfKeys: 1,
    lua: `${ENTRY}local value, textOrKind = entry(KEYS[1])
if value == nil then return { textOrKind } end
if value == false then return false end
return textOrKind`
  },
  /**
   * `TokenCache.set`: ARGV[1] the entry, ARGV[2] its time to live in ms ("0": none). `[1, replicas]`, or
   * `[type, 0]` for another application's value (left as it is).
   */
  serviceSdkTokenSet: {
    numberOfKeys: 1,
    lua: `${ENTRY}local value, kind = entry(KEYS[1])
if value == nil then return { kind, 0 } end
write(KEYS[1], ARGV[1], ARGV[2])
return { 1, replicas() }`
  },
  /**
   * `TokenCache.compareAndSet`: ARGV[1] the expected entry ("" for none), ARGV[2] the new entry, ARGV[3] its time to
   * live in ms ("0": none). Writes only if the entry still has the expected access and refresh token (whatever mark
   * was added since), or, for none, is empty: `[1, replicas]` when written, `[0, 0]` when the entry changed,
   * `[type, 0]` for another application's value.
   */
  serviceSdkTokenCas: {
    numberOfKeys: 1,
    lua: `${ENTRY}local current, kind = entry(KEYS[1])
if current == nil then return { kind, 0 } end
local same
if ARGV[1] == "" then
  same = current == false
elseif current == false then
  same = false
else
  local ok, expected = pcall(cjson.decode, ARGV[1])
  same = ok and type(expected) == "table"
    and current.access_token == expected.access_token and current.refresh_token == expected.refresh_token
end
if not same then return { 0, 0 } end
write(KEYS[1], ARGV[2], ARGV[3])
return { 1, replicas() }`
  },
  /**
   * A write no replica has confirmed yet, kept: ARGV[1] the entry written, ARGV[2] its time to live ("0": none).
   * `["ours", replicas, offset, acked]` while the key holds it; `["restored", replicas, offset, acked]` when the key
   * went back to an older token of the same client (a failover lost the write) and it was written again; `["newer",
   * 0]` (a newer token, another client's), `["gone", 0]` (signed out) or `[type, 0]` (another application's value)
   * when it is no longer ours to keep. `offset`: the server's replication offset after the entry was (re)written;
   * `acked`: the highest offset a replica has acknowledged (-1: none), so that a kept write is confirmed without
   * `WAIT`, which would block every other command of the connection while a replica lags. An entry that has no
   * `client_id`/`auth_url` (written by a sign-in of another program) is of every client, as the providers read it.
   */
  serviceSdkTokenKeep: {
    numberOfKeys: 1,
    lua: `${ENTRY}local function replication()
  local info = redis.pcall("info", "replication")
  if type(info) ~= "string" then return 0, -1, -1 end
  local acked = -1
  for offset in string.gmatch(info, "slave%d+:[^\\r\\n]*offset=(%d+)") do
    if tonumber(offset) > acked then acked = tonumber(offset) end
  end
  return tonumber(string.match(info, "connected_slaves:(%d+)")) or 0,
    tonumber(string.match(info, "master_repl_offset:(%d+)")) or -1, acked
end
local current, kind = entry(KEYS[1])
if current == nil then return { kind, 0 } end
if current == false then return { "gone", 0 } end
local ours = cjson.decode(ARGV[1])
local state
if current.access_token == ours.access_token and current.refresh_token == ours.refresh_token then
  state = "ours"
elseif type(current.expires_at) == "number" and type(ours.expires_at) == "number"
  and current.expires_at < ours.expires_at
  and (current.client_id == nil or current.client_id == ours.client_id)
  and (current.auth_url == nil or current.auth_url == ours.auth_url) then
  write(KEYS[1], ARGV[1], ARGV[2])
  state = "restored"
else
  return { "newer", 0 }
end
local count, offset, acked = replication()
return { state, count, tostring(offset), tostring(acked) }`
  },
  /** `TokenCache.clear`: deletes one of our entries: 1 or 0, or the type of another application's value. */
  serviceSdkTokenClear: {
    numberOfKeys: 1,
    lua: `${ENTRY}local value, kind = entry(KEYS[1])
if value == nil then return kind end
return redis.call("del", KEYS[1])`
  },
  /**
   * Takes the lock KEYS[1] for ARGV[1] for ARGV[2] ms if it is free (`SET NX PX`), or if ARGV[1] has it already (a
   * try whose reply was lost, sent again): `[1, replid]` when ARGV[1] holds it, `[0, replid]` when another owner
   * does (replid: the server's `master_replid`, "" when it cannot say; see {@link promotionWatch}), the type of
   * another application's value.
   * A lock of ours without an expiry (never written so by this version) is given one, so no lock is waited on for
   * longer than its TTL.
   */
  serviceSdkLockAcquire: {
    numberOfKeys: 1,
    lua: `${LOCK}local function replid()
  local info = redis.pcall("info", "replication")
  if type(info) ~= "string" then return "" end
  return string.match(info, "master_replid:(%x+)") or ""
end
local owner, kind = lock(KEYS[1])
if owner == nil then return kind end
if owner == false then redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) return { 1, replid() } end
if owner == ARGV[1] then redis.call("pexpire", KEYS[1], ARGV[2]) return { 1, replid() } end
if redis.call("pttl", KEYS[1]) < 0 then redis.call("pexpire", KEYS[1], ARGV[2]) end
return { 0, replid() }`
  },
  /** Deletes the lock KEYS[1] only if ARGV[1] owns it. */
  serviceSdkLockRelease: {
    numberOfKeys: 1,
    lua: `${LOCK}if lock(KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end
return 0`
  },
  /**
   * Extends the lock KEYS[1] to ARGV[2] ms if ARGV[1] owns it, or takes it again if it is gone (a FLUSHALL, a
   * restarted Redis): 1 while it is ARGV[1]'s, 0 when another owner has it, the type of another application's value.
   */
  serviceSdkLockExtend: {
    numberOfKeys: 1,
    lua: `${LOCK}local owner, kind = lock(KEYS[1])
if owner == nil then return kind end
if owner == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end
if owner == false then redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end
return 0`
  }
} as const

export type ScriptName = keyof typeof SCRIPTS

/** The acquire script's reply (not a neighbour's type): whether the lock is ours, and the server's replication id. */
export const lockAcquired = (reply: unknown): { readonly acquired: boolean; readonly replid: string } =>
  Array.isArray(reply)
    ? { acquired: reply[0] === 1, replid: typeof reply[1] === "string" ? reply[1] : "" }
    : { acquired: reply === 1, replid: "" }

/**
 * What a connection remembers of the servers that answered its lock tries: when (live ms) each replication id was
 * first seen. One per connection, whatever number of locks (users) it serves.
 */
export type ReplicationIds = Map<string, number>

/**
 * Per lock: when a try is answered by a server with another replication id than at the lock's last try (a replica
 * promoted by a failover takes a new `master_replid`; the lock, and writes the old master had not passed on, may then
 * have been lost), the instant (live ms) this connection first saw that server; else undefined. A holder settles from
 * then (28.R4 (c)) even when it saw nothing of the failover (a Redis Cluster client that sent no command during it
 * sees no `close`). Counted from the connection's first sight of the promoted server, not from each lock's: the
 * first try of every other user's lock after the failover finds the new id too, and must not make every holder of
 * the connection settle again (issue 44: 20 users settled one after another, 2 s each, for 40 s).
 *
 * A lock's first try has no id of its own to compare: it counts as meeting a promoted server when the connection had
 * been away (`awayAt`, live ms, 0 if never) and first saw that id after it came back. Otherwise a process that had
 * never taken this user's lock before a Sentinel failover renewed from the rolled-back entry as soon as its
 * `close`-based wait ran out, before another process's kept write of the newer token landed (issue 44).
 */
export const promotionWatch = (
  seen: ReplicationIds
): ((replid: string, nowMillis: number, awayAt: number) => number | undefined) => {
  let last: string | undefined
  return (replid, nowMillis, awayAt) => {
    if (replid === "") return undefined
    let first = seen.get(replid)
    if (first === undefined) {
      first = nowMillis
      seen.set(replid, first)
      // a connection meets a handful of servers in its life; a bound in case one meets many
      if (seen.size > 64) seen.delete(seen.keys().next().value as string)
    }
    const changed = last === undefined ? awayAt > 0 && first >= awayAt : last !== replid
    last = replid
    return changed ? first : undefined
  }
}

/**
 * A kept write's confirmation, from the keep script's reply (`[state, replicas, offset, acked]`): the replication
 * offset a replica must acknowledge (`target`: the offset a reply gave while the key held the write; a restore's
 * reply says it before the restore itself is passed on, so the next reply's is taken), and whether one has.
 */
export const keptReply = (
  reply: ReadonlyArray<unknown>,
  target: number | undefined
): {
  readonly state: string
  readonly replicas: number
  readonly target: number | undefined
  readonly confirmed: boolean
} => {
  const state = String(reply[0])
  const replicas = Number(reply[1]) || 0
  const offset = Number(reply[2] ?? -1)
  const acked = Number(reply[3] ?? -1)
  const next = state === "restored" ? undefined : (target ?? (offset >= 0 ? offset : undefined))
  return { state, replicas, target: next, confirmed: next !== undefined && replicas > 0 && acked >= next }
}
