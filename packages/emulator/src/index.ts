/**
 * `@service-sdk/emulator`: the Service (accounts service and data API) on a loopback HTTP server, with fixture
 * data, many users and fault injection, for offline work, tests and benchmarks. A bundle with no dependency and no
 * peer: it installs beside Effect 3, Effect 4 or no Effect. Effect programs get it as a layer from
 * `@service-sdk/effect/testing` (`Emulator.layer`).
 *
 * @since 1.0.0
 * @module @service-sdk/emulator
 */
export {
  type ClientRegistration,
  defaultClientId,
  defaultClientSecret,
  defaultPublicClientId,
  Emulator,
  type EmulatorConfig,
  type EmulatorHandle,
  type EmulatorOptions,
  type Fault,
  localFileTrackId,
  type PlaybackState,
  type SignInOptions,
  type SignInTokens,
  type Stats,
  start
} from "./Emulator.js"
export { EmulatorError } from "./EmulatorError.js"
