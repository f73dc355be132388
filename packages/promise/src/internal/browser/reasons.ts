/**
 * Why the browser bundle of `@service-sdk/promise` (`dist/browser.js`, the `browser`, `worker` and `workerd` export
 * conditions) refuses what needs Node: the text of its ConfigurationErrors, for a browser page and for a Cloudflare
 * Worker (bundled with wrangler's default conditions, a Worker gets this bundle too; its reasons are the Effect 4
 * line's, `@service-sdk/shared/workers`).
 */
import { inCloudflareWorker, workerFileProblem, workerRedisProblem } from "@service-sdk/shared/workers"

/** A file cache or directory store named `name` (`fileTokenCache`, `directoryTokenStore`). */
export const noFiles = (name: string): string =>
  inCloudflareWorker()
    ? workerFileProblem(name)
    : `${name}: there is no file system in a browser page; use browserTokenCache({ key }) (docs/browser.md)`

/** A Redis cache or store named `name` (`RedisTokenCache`, `RedisTokenStore`). */
export const noRedis = (name: string): string =>
  inCloudflareWorker()
    ? workerRedisProblem(name)
    : `${name}: a browser page cannot open a Redis connection (ioredis needs a TCP socket); use ` +
      "browserTokenCache({ key }) in the page, and Redis on your server"

/** `authorizeLocal` (a loopback HTTP server that receives the redirect). */
export const noLoopbackServer = (): string =>
  inCloudflareWorker()
    ? "authorizeLocal: a Cloudflare Worker cannot listen on a loopback port for the sign-in's redirect; sign users " +
      "in with AsyncAuthorizationCode's beginAuthorization and completeAuthorization on your own routes"
    : "authorizeLocal: a browser page cannot listen on a loopback port for the sign-in's redirect (it is a command-line " +
      "helper); sign in by redirect: AsyncAuthorizationCode's beginAuthorization, then completeAuthorization on the " +
      "page the consent page sends the user back to (docs/browser.md)"
