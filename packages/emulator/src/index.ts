/**
 * `@service-sdk/emulator`: the Service (accounts service and data API) on a loopback HTTP server, with fixture
 * data, many users and fault injection, for offline work, tests and benchmarks.
 *
 * @since 1.0.0
 * @module @service-sdk/emulator
 */
export {
  type ClientRegistration,
  defaultClientId,
  defaultClientSecret,
  Emulator,
  type EmulatorConfig,
  EmulatorError,
  type EmulatorHandle,
  type EmulatorOptions,
  type Fault,
  type PlaybackState,
  type SignInOptions,
  type SignInTokens,
  type Stats
} from "./Emulator.js"
