/**
 * @since 1.0.0
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
