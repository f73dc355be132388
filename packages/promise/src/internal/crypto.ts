/**
 * `node:crypto` for the bundle, loaded on first use: the build puts this module where the SDK imports `node:crypto`
 * (hashes, random bytes and ids are needed by a sign-in, a file cache or a lock, not by `import`), so loading the
 * package does not load Node's crypto module (~2-3 ms of a cold start). Each export calls Node's own function.
 */
import type * as Crypto from "node:crypto"

let crypto: typeof Crypto | undefined
const load = (): typeof Crypto => {
  crypto ??= require("node:crypto") as typeof Crypto
  return crypto
}

/** `crypto.createHash` */
export const createHash: typeof Crypto.createHash = (...args: Parameters<typeof Crypto.createHash>) =>
  load().createHash(...args)

/** `crypto.randomBytes` */
export const randomBytes = ((...args: Parameters<typeof Crypto.randomBytes>) =>
  (load().randomBytes as (...args: ReadonlyArray<unknown>) => unknown)(...args)) as typeof Crypto.randomBytes

/** `crypto.randomUUID` */
export const randomUUID: typeof Crypto.randomUUID = (options) => load().randomUUID(options)

/** `crypto.timingSafeEqual` */
export const timingSafeEqual: typeof Crypto.timingSafeEqual = (a, b) => load().timingSafeEqual(a, b)
