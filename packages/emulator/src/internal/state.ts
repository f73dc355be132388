import type { ClientRegistration, Fault, PlaybackState, Stats } from "../Emulator.js"
import type { Catalog } from "./catalog.js"
import { DEFAULT_PLAYLIST_ID, INITIAL_PLAYLIST_TRACK_IDS, initialSavedTracks } from "./fixtures.js"
import { uri } from "./catalog.js"
import { randomToken } from "./random.js"

/** @internal */
export interface ConfigState {
  readonly tokenLifetime: number
  /** seconds a refresh token lasts from sign-in, not extended by refreshing (the Service: 180 days); null: forever */
  readonly refreshTokenLifetime: number | null
  readonly rotateRefreshTokens: boolean
  readonly autoApprove: boolean
  /** PKCE for every client (public clients always need it) */
  readonly requirePkce: boolean
  readonly playback: PlaybackState | null
}

/** @internal */
export interface ResolvedOptions {
  readonly clients: ReadonlyMap<string, ClientRegistration>
  readonly defaultClient: ClientRegistration
  readonly tokenLatencyMs: number
  readonly config: ConfigState
}

/** @internal */
export interface Grant {
  readonly id: string
  readonly clientId: string
  /** the granted scope, space-delimited (RFC 6749 §3.3) */
  readonly scope: string
  readonly scopes: ReadonlySet<string>
  /** `undefined` for app tokens (client credentials) */
  readonly userId: string | undefined
  /** when the user signed in (epoch milliseconds): a refresh token's lifetime counts from here */
  readonly signedInAt: number
}

/** @internal */
export interface AccessTokenEntry {
  readonly grant: Grant
  readonly scope: string
  readonly scopes: ReadonlySet<string>
  /** epoch milliseconds, from the Effect Clock */
  readonly expiresAt: number
}

/** @internal */
export interface CodeEntry {
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: string
  readonly userId: string
  readonly expiresAt: number
  /** the S256 PKCE challenge of the authorization request (RFC 7636 §4.4), if any */
  readonly codeChallenge: string | undefined
  /** the grant the code was exchanged for; set on first use (RFC 6749 §4.1.2: reuse revokes it) */
  redeemedBy: Grant | undefined
}

/** @internal */
export interface PendingAuthorization {
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: string
  readonly state: string | undefined
  readonly codeChallenge: string | undefined
  /** the user the consent page offers first (`login_hint`, else `emulator-user`) */
  readonly loginHint: string
  readonly expiresAt: number
}

/** One user's library: saved tracks, most recently added first. @internal */
export interface Library {
  readonly savedTracks: Array<{ readonly trackId: string; readonly addedAt: string }>
  readonly savedTrackIds: Set<string>
}

/** User ids the emulator accepts (`login_hint`, the consent form, `signIn`). @internal */
export const USER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

/** @internal */
export const isUserId = (id: unknown): id is string => typeof id === "string" && USER_ID_PATTERN.test(id)

/** @internal */
export interface PlaylistState {
  version: number
  snapshotId: string
  readonly items: Array<{ readonly uri: string; readonly addedAt: string }>
}

interface QueuedFault {
  readonly fault: Fault
  remaining: number
}

/** Authorization codes live 10 minutes (RFC 6749 §4.1.2 recommends at most 10). @internal */
export const CODE_LIFETIME_MS = 10 * 60 * 1000

const SWEEP_EVERY = 1024

/**
 * All mutable state of one emulator. Plain maps: every operation is synchronous, so it is atomic on the event loop.
 *
 * @internal
 */
export class EmulatorState {
  config: ConfigState
  readonly accessTokens = new Map<string, AccessTokenEntry>()
  readonly refreshTokens = new Map<string, Grant>()
  readonly codes = new Map<string, CodeEntry>()
  readonly pending = new Map<string, PendingAuthorization>()
  readonly faults: { readonly token: Array<QueuedFault>; readonly api: Array<QueuedFault> } = { token: [], api: [] }
  /** per user, created on first use */
  readonly libraries = new Map<string, Library>()
  readonly playlists = new Map<string, PlaylistState>()

  tokenStats = { total: 0, client_credentials: 0, authorization_code: 0, refresh_token: 0 }
  apiTotal = 0
  readonly apiByStatus = new Map<number, number>()
  readonly apiByPath = new Map<string, number>()
  /** data API requests whose bearer is a valid user token, by that token's user */
  readonly apiByUser = new Map<string, number>()

  private grantCounter = 0
  private issued = 0

  constructor(
    readonly options: ResolvedOptions,
    readonly catalog: Catalog
  ) {
    this.config = options.config
    this.reset()
  }

  /** Back to the start options: clears tokens, codes, pending consents, faults, stats and library changes. */
  reset(): void {
    this.config = this.options.config
    this.accessTokens.clear()
    this.refreshTokens.clear()
    this.codes.clear()
    this.pending.clear()
    this.faults.token.length = 0
    this.faults.api.length = 0
    this.libraries.clear()
    this.playlists.clear()
    this.playlists.set(DEFAULT_PLAYLIST_ID, {
      version: 1,
      snapshotId: snapshotId(DEFAULT_PLAYLIST_ID, 1),
      items: INITIAL_PLAYLIST_TRACK_IDS.map((id, index) => ({
        uri: uri("track", id),
        addedAt: new Date(Date.UTC(2024, 1, 1 + index)).toISOString().replace(".000Z", "Z")
      }))
    })
    this.tokenStats = { total: 0, client_credentials: 0, authorization_code: 0, refresh_token: 0 }
    this.apiTotal = 0
    this.apiByStatus.clear()
    this.apiByPath.clear()
    this.apiByUser.clear()
  }

  /** The user's library, starting from their fixture saved tracks on first use. */
  library(userId: string): Library {
    let library = this.libraries.get(userId)
    if (library === undefined) {
      const savedTracks = [...initialSavedTracks(userId)]
      library = { savedTracks, savedTrackIds: new Set(savedTracks.map((saved) => saved.trackId)) }
      this.libraries.set(userId, library)
    }
    return library
  }

  recordApiUser(userId: string): void {
    this.apiByUser.set(userId, (this.apiByUser.get(userId) ?? 0) + 1)
  }

  newGrant(clientId: string, scope: string, userId: string | undefined, now: number): Grant {
    return { id: `g${++this.grantCounter}`, clientId, scope, scopes: scopeSet(scope), userId, signedInAt: now }
  }

  /**
   * Seconds left before the grant's refresh tokens end (`refresh_token_expires_in`), when `refreshTokenLifetime` is
   * set: counted from the sign-in, so refreshing does not extend it.
   */
  refreshTokenExpiresIn(grant: Grant, now: number): number | undefined {
    const lifetime = this.config.refreshTokenLifetime
    if (lifetime === null) return undefined
    return Math.max(0, Math.floor((grant.signedInAt + lifetime * 1000 - now) / 1000))
  }

  issueAccessToken(
    grant: Grant,
    scope: string,
    now: number,
    lifetime?: number
  ): { readonly token: string; readonly expiresIn: number } {
    this.maybeSweep(now)
    const token = randomToken()
    const expiresIn = lifetime ?? this.config.tokenLifetime
    const scopes = scope === grant.scope ? grant.scopes : scopeSet(scope)
    this.accessTokens.set(token, { grant, scope, scopes, expiresAt: now + expiresIn * 1000 })
    return { token, expiresIn }
  }

  issueRefreshToken(grant: Grant): string {
    const token = randomToken()
    this.refreshTokens.set(token, grant)
    return token
  }

  /** Revokes an access or refresh token; a refresh token takes the access tokens of its grant with it. */
  revoke(token: string): boolean {
    if (this.accessTokens.delete(token)) return true
    const grant = this.refreshTokens.get(token)
    if (grant === undefined) return false
    this.revokeGrant(grant)
    return true
  }

  revokeGrant(grant: Grant): void {
    for (const [token, entry] of this.refreshTokens) {
      if (entry.id === grant.id) this.refreshTokens.delete(token)
    }
    for (const [token, entry] of this.accessTokens) {
      if (entry.grant.id === grant.id) this.accessTokens.delete(token)
    }
  }

  enqueueFault(fault: Fault): void {
    this.faults[fault.target].push({ fault, remaining: fault.count ?? 1 })
  }

  /** The fault for the next request to `target`, if any (faults apply in the order they were queued). */
  takeFault(target: Fault["target"]): Fault | undefined {
    const queue = this.faults[target]
    const head = queue[0]
    if (head === undefined) return undefined
    head.remaining -= 1
    if (head.remaining <= 0) queue.shift()
    return head.fault
  }

  recordTokenRequest(grantType: string | undefined): void {
    this.tokenStats.total += 1
    if (grantType === "client_credentials" || grantType === "authorization_code" || grantType === "refresh_token") {
      this.tokenStats[grantType] += 1
    }
  }

  recordApiRequest(path: string): void {
    this.apiTotal += 1
    this.apiByPath.set(path, (this.apiByPath.get(path) ?? 0) + 1)
  }

  recordApiStatus(status: number): void {
    this.apiByStatus.set(status, (this.apiByStatus.get(status) ?? 0) + 1)
  }

  stats(): Stats {
    const byStatus: Record<string, number> = {}
    for (const [status, count] of [...this.apiByStatus].sort(([a], [b]) => a - b)) byStatus[String(status)] = count
    return {
      tokenRequests: { ...this.tokenStats },
      apiRequests: { total: this.apiTotal, byStatus, byPath: Object.fromEntries(this.apiByPath) }
    }
  }

  bumpPlaylist(playlist: PlaylistState, playlistId: string): string {
    playlist.version += 1
    playlist.snapshotId = snapshotId(playlistId, playlist.version)
    return playlist.snapshotId
  }

  /** Drops expired tokens, codes and consents now and then, so long benchmark runs keep a flat heap. */
  private maybeSweep(now: number): void {
    if (++this.issued % SWEEP_EVERY !== 0) return
    for (const [token, entry] of this.accessTokens) {
      if (entry.expiresAt <= now) this.accessTokens.delete(token)
    }
    for (const [code, entry] of this.codes) {
      if (entry.expiresAt <= now) this.codes.delete(code)
    }
    for (const [id, entry] of this.pending) {
      if (entry.expiresAt <= now) this.pending.delete(id)
    }
  }
}

/** @internal */
export const scopeSet = (scope: string): ReadonlySet<string> => new Set(scope.split(" ").filter((s) => s.length > 0))

const snapshotId = (playlistId: string, version: number): string =>
  Buffer.from(`${version},${playlistId}`).toString("base64url")
