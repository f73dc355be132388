/**
 * The Promise facade's suites (`@service-sdk/effect/promise`), written once: each line's `test/facade/<name>.test.ts`
 * (the same path in both lines) calls the suite of that name with its {@link FacadeLine} (`test/facade/line.ts`).
 * What only one line has stays in that line's test file, with a comment saying why.
 */
export * from "./line.js"
export { promiseClient } from "./promiseClient.js"
