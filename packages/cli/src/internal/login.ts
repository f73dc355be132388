/**
 * What `login` remembers beside the token cache, so that `whoami` refreshes the way the login signed in: the client
 * id and whether it is a public client (no secret). No secret is ever written here.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"

export interface SavedLogin {
  readonly clientId: string
  readonly publicClient: boolean
}

/** `<cache>.client.json`, next to the token cache file. */
export const loginPath = (cachePath: string) => `${cachePath}.client.json`

/** Written after a successful login, mode 0600 like the cache. A failure is only a warning: the login worked. */
export const saveLogin = (cachePath: string, login: SavedLogin) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.writeFileString(
      loginPath(cachePath),
      `${JSON.stringify({ client_id: login.clientId, public_client: login.publicClient })}\n`,
      { mode: 0o600 }
    )
  ).pipe(Effect.catchAll((error) => Effect.logWarning(`could not remember the login's client: ${error.message}`)))

/** Forgets the previous login's client before a new sign-in (a failed login must not leave a stale one). */
export const forgetLogin = (cachePath: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(loginPath(cachePath))).pipe(Effect.ignore)

/** The saved login's client, or undefined when there is none or it is unreadable. */
export const readLogin = (cachePath: string): Effect.Effect<SavedLogin | undefined, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(loginPath(cachePath))).pipe(
    Effect.map((text): SavedLogin | undefined => {
      try {
        const json = JSON.parse(text) as { readonly client_id?: unknown; readonly public_client?: unknown }
        return typeof json.client_id === "string" && json.client_id !== ""
          ? { clientId: json.client_id, publicClient: json.public_client === true }
          : undefined
      } catch {
        return undefined
      }
    }),
    Effect.orElseSucceed(() => undefined)
  )
