/**
 * The web app example: many users signed in to one server, each calling the Service with their own tokens.
 *
 * @since 1.0.0
 */

/** @since 1.0.0 */
export * as App from "./App.js"
/** @since 1.0.0 */
export * as Pages from "./pages.js"
/** @since 1.0.0 */
export * as Sessions from "./Sessions.js"
/** @since 1.0.0 */
export * as WebApp from "./WebApp.js"
