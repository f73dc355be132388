/**
 * Cloudflare Workers (workerd): where the SDK's caches that need a file system or a Redis connection are refused.
 * A Worker has `node:fs` (nodejs_compat), but its /tmp is in memory and lasts one request, so a file cache there
 * would fetch a token per request and lock nothing; a Redis connection cannot outlive the request that opened it.
 */

/** Whether this code runs in a Cloudflare Worker (`navigator.userAgent` is "Cloudflare-Workers" there). */
export const inCloudflareWorker = (): boolean =>
  (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === "Cloudflare-Workers"

/** Why a file or directory cache named `name` cannot run in a Worker (for its ConfigurationError). */
export const workerFileProblem = (name: string): string =>
  `${name}: a Cloudflare Worker has no file system that outlives a request (its node:fs /tmp is in memory, ` +
  "per request); use the memory cache, or a cache of your own on Workers KV or a Durable Object"

/** Why a Redis cache named `name` cannot run in a Worker (for its ConfigurationError). */
export const workerRedisProblem = (name: string): string =>
  `${name}: a Cloudflare Worker cannot keep a Redis connection (ioredis's TCP socket) beyond one request; ` +
  "use the memory cache, or a cache of your own on Workers KV or a Durable Object"
