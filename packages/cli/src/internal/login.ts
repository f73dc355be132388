/**
 * What `login` remembers beside the token cache, so that `whoami`, `token --user` and `logout` work in a new shell
 * with no flag and no environment (the contract (9), CLI): the accounts service and API URLs, the client id and
 * whether it is a public client (no secret). Flags and the environment override it. No secret is ever written here. Written like the token cache
 * itself: an exclusive temp file (never through a file or link someone placed there), mode 0600, renamed over the
 * target; in a directory nobody else may write.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"
import { dirname } from "node:path"
import { ConfigurationError, TokenCache } from "@service-sdk/effect"

export interface SavedLogin {
  readonly clientId: string
  readonly publicClient: boolean
  /** the accounts service signed in to (absent in a file of an older CLI) */
  readonly authUrl?: string | undefined
  /** the data API, when the login named one (flag or environment) */
  readonly apiUrl?: string | undefined
}

/** `<cache>.client.json`, next to the token cache file. */
export const loginPath = (cachePath: string) => `${cachePath}.client.json`

/**
 * What to do with the cache's directory when others may write it: the library's own check (`TokenCache.directoryVerdict`,
 * the one every file cache makes), so the CLI and the library agree on what is safe. The CLI tightens a directory of
 * its own where the library only refuses.
 */
export const directoryVerdict = TokenCache.directoryVerdict

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`

/**
 * The directory of the token cache, created 0700 when missing. One that other users may write (a 0777 directory: they
 * could swap the files in it) is tightened to 0700 when it is ours, else refused with a message that says what to do.
 */
export const secureCacheDirectory = (cachePath: string): Effect.Effect<void, ConfigurationError> =>
  Effect.gen(function* () {
    const dir = dirname(cachePath)
    const fail = (what: string) =>
      new ConfigurationError({ message: `cannot use the token cache directory ${dir}: ${what}` })
    yield* Effect.tryPromise({
      try: () => Fs.mkdir(dir, { recursive: true, mode: 0o700 }),
      catch: (cause) => fail((cause as Error).message)
    })
    const stat = yield* Effect.tryPromise({ try: () => Fs.stat(dir), catch: (cause) => fail((cause as Error).message) })
    const verdict = directoryVerdict(stat, process.getuid?.())
    if (verdict === "refuse") {
      return yield* fail(
        `${TokenCache.directoryProblem(stat, process.getuid?.())}, so it is left as it is; pass --cache with a path in a directory only you can write (e.g. ~/.config/service-sdk/tokens.json)`
      )
    }
    if (verdict === "tighten") {
      yield* Effect.tryPromise({
        try: () => Fs.chmod(dir, 0o700),
        catch: (cause) =>
          fail(`other users can write to it (mode ${octal(stat.mode)}) and chmod failed: ${(cause as Error).message}`)
      })
      yield* Console.error(`note: ${dir} was writable by other users (mode ${octal(stat.mode)}); it is now 0700`)
    }
  })

/** Written after a successful login, as the token cache writes its file. A failure is only a warning: the login worked. */
export const saveLogin = (cachePath: string, login: SavedLogin) =>
  TokenCache.writeFile(
    loginPath(cachePath),
    `${JSON.stringify({
      client_id: login.clientId,
      public_client: login.publicClient,
      ...(login.authUrl === undefined ? {} : { auth_url: login.authUrl }),
      ...(login.apiUrl === undefined ? {} : { api_url: login.apiUrl })
    })}\n`
  ).pipe(Effect.catchAll((error) => Console.error(`warning: could not remember the login's client: ${error.message}`)))

/** Forgets the previous login's client before a new sign-in (a failed login must not leave a stale one). */
export const forgetLogin = (cachePath: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(loginPath(cachePath))).pipe(Effect.ignore)

/** A saved URL, when it is one (`http:` or `https:`); anything else is ignored. */
const httpUrl = (value: unknown): string | undefined => {
  if (typeof value !== "string") return undefined
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? value : undefined
  } catch {
    return undefined
  }
}

/** The saved login's client, or undefined when there is none, it is unreadable, or it is not a plain file (a link). */
export const readLogin = (cachePath: string): Effect.Effect<SavedLogin | undefined> =>
  Effect.tryPromise(async () => {
    const path = loginPath(cachePath)
    if (!(await Fs.lstat(path)).isFile()) return undefined
    return await Fs.readFile(path, "utf8")
  }).pipe(
    Effect.map((text): SavedLogin | undefined => {
      if (text === undefined) return undefined
      try {
        const json = JSON.parse(text) as {
          readonly client_id?: unknown
          readonly public_client?: unknown
          readonly auth_url?: unknown
          readonly api_url?: unknown
        }
        return typeof json.client_id === "string" && json.client_id !== ""
          ? {
              clientId: json.client_id,
              publicClient: json.public_client === true,
              authUrl: httpUrl(json.auth_url),
              apiUrl: httpUrl(json.api_url)
            }
          : undefined
      } catch {
        return undefined
      }
    }),
    Effect.orElseSucceed(() => undefined)
  )
