/**
 * The options every command takes (only the command line's own modules: `--help` loads nothing else).
 */
import * as Options from "@effect/cli/Options"

/** The options every command takes. */
export const targetOptions = {
  authUrl: Options.text("auth-url").pipe(
    Options.withDescription(
      "accounts service URL (default $SERVICE_SDK_AUTH_URL, else https://accounts.service.example)"
    ),
    Options.optional
  ),
  apiUrl: Options.text("api-url").pipe(
    Options.withDescription("data API URL (default $SERVICE_SDK_API_URL, else https://api.service.example/v1)"),
    Options.optional
  ),
  clientId: Options.text("client-id").pipe(
    Options.withDescription("OAuth client id (default $SERVICE_SDK_CLIENT_ID)"),
    Options.optional
  ),
  clientSecret: Options.redacted("client-secret").pipe(
    Options.withDescription("OAuth client secret (default $SERVICE_SDK_CLIENT_SECRET)"),
    Options.optional
  ),
  emulator: Options.boolean("emulator").pipe(
    Options.withDescription("use an embedded emulator of the Service instead of the real one")
  )
}

/** `--public-client`: sign in with no secret (PKCE only), for login and whoami. */
export const publicClientOption = Options.boolean("public-client").pipe(
  Options.withDescription(
    "sign in as a public client: no secret, PKCE only (default $SERVICE_SDK_PUBLIC_CLIENT=1; whoami remembers it)"
  )
)
