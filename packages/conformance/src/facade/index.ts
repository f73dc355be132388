/**
 * The Promise facade's suites (`@service-sdk/effect/promise`), written once: each line's `test/facade/<name>.test.ts`
 * (the same path in both lines) calls the suite of that name with its {@link FacadeLine} (`test/facade/line.ts`).
 * What only one line has stays in that line's test file, with a comment saying why.
 */
export { authorizeLocal, loopbackProvider, redirectBack } from "./authorizeLocal.js"
export { defaultClient } from "./defaultClient.js"
export * from "./line.js"
export { malformedUrl } from "./malformedUrl.js"
export { promiseClient } from "./promiseClient.js"
export { promiseFetch } from "./promiseFetch.js"
export { promiseHostile } from "./promiseHostile.js"
export { promisePlain } from "./promisePlain.js"
export { promiseProviders } from "./promiseProviders.js"
export { promiseUserTokens } from "./promiseUserTokens.js"
export { loadedUrls } from "./startup.js"
