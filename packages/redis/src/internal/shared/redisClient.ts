// Copied from packages/shared/src/redisClient.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * How the Redis cache talks about its client, one copy for both Effect lines (no Effect, no ioredis import): the
 * message for a key that holds another application's value, a failure described without credentials or command
 * arguments, a client's address, and which failures are Redis being away for a while (tried again) rather than an
 * answer.
 */

/**
 * How a key that holds another application's value is described: service-sdk never overwrites, re-times or deletes
 * a value it did not write.
 */
export const neighbourMessage = (address: string, key: string, kind: string, ours: "token entry" | "lock"): string =>
  `the Redis key "${key}" on ${address} holds another application's value ` +
  `(${kind === "string" ? `a string that is not a service-sdk ${ours}` : `a ${kind}`}): service-sdk never ` +
  "overwrites, re-times or deletes a value it did not write; give the cache a key (or prefix) of its own, or " +
  "delete that key if nothing uses it"

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

/** What {@link describeClient} reads of an ioredis `Redis` client's options. */
interface ClientOptions {
  readonly path?: string | null | undefined
  readonly sentinels?: ReadonlyArray<unknown> | null | undefined
  readonly name?: string | null | undefined
  readonly tls?: unknown
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly db?: number | undefined
}

/** Where a borrowed client points, without credentials. */
export const describeClient = (client: { readonly isCluster?: boolean; readonly options?: object }): string => {
  if (client.isCluster === true) return "a Redis cluster"
  const options: ClientOptions = client.options ?? {}
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
