/**
 * The Effect 4 line's conformance driver: the scenarios' plain operations over this line's public API (the same
 * file, at the same path, exists in the Effect 3 line). Each provider lives in its own `Scope` until `close`.
 */
import type {
  Api,
  AuthorizationCodeProvider,
  Driver,
  ErrorShape,
  OAuth,
  Outcome,
  Provider,
  ProviderOptions,
  TokenShape,
  Users
} from "@service-sdk/conformance"
import {
  AuthorizationCode,
  ClientCredentials,
  OAuthClient,
  ServiceClient,
  ServiceError,
  TokenCache,
  TokenInfo,
  TokenStore,
  UserTokens,
  type TokenProviderService
} from "@service-sdk/effect"
import { inspect } from "node:util"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Scope from "effect/Scope"

const platform = FetchHttpClient.layer

const shape = (error: unknown): ErrorShape => {
  const fields = error as { _tag?: unknown; message?: unknown; status?: unknown }
  return {
    _tag: String(fields._tag),
    message: String(fields.message),
    status: typeof fields.status === "number" ? fields.status : undefined,
    isServiceError: error instanceof ServiceError,
    shown: [String(error), inspect(error, { depth: 5 }), JSON.stringify(error)].join("\n")
  }
}

/** Runs `effect` with the platform in `scope`; a failure becomes an outcome, a defect rejects. */
const run = <A, E>(
  effect: Effect.Effect<A, E, Scope.Scope | HttpClient.HttpClient>,
  scope: Scope.Scope
): Promise<Outcome<A>> =>
  Effect.runPromise(
    effect.pipe(
      Scope.provide(scope),
      Effect.provide(platform),
      Effect.match({
        onFailure: (error): Outcome<A> => ({ ok: false, error: shape(error) }),
        onSuccess: (value): Outcome<A> => ({ ok: true, value })
      })
    ) as Effect.Effect<Outcome<A>>
  )

const tokenShape = (token: TokenInfo): TokenShape => ({
  accessToken: Redacted.value(token.accessToken),
  refreshToken: token.refreshToken === undefined ? undefined : Redacted.value(token.refreshToken),
  expiresAt: token.expiresAt,
  scope: token.scope
})

/** The scenario's options as this line's: durations are Effect duration strings or numbers (bad ones on purpose). */
const options = (given: ProviderOptions) => {
  const { tokenCacheFile, timeout, skew, ...rest } = given
  const duration = (value: string | number) => value as Duration.Input
  return Effect.gen(function* () {
    const tokenCache = tokenCacheFile === undefined ? undefined : yield* TokenCache.file(tokenCacheFile)
    return {
      ...rest,
      ...(timeout === undefined ? {} : { timeout: duration(timeout) }),
      ...(skew === undefined ? {} : { skew: duration(skew) }),
      ...(tokenCache === undefined ? {} : { tokenCache })
    }
  })
}

const providerOf = (service: TokenProviderService, scope: Scope.Closeable): Provider => ({
  getAccessToken: () => run(Effect.map(service.getAccessToken, Redacted.value), scope),
  forceRefresh: (rejected) => run(Effect.map(service.forceRefresh(Redacted.make(rejected)), Redacted.value), scope),
  close: () => Effect.runPromise(Scope.close(scope, Exit.void))
})

const scoped = async <A>(make: (scope: Scope.Closeable) => Promise<Outcome<A>>): Promise<Outcome<A>> => {
  const scope = Effect.runSync(Scope.make())
  const made = await make(scope)
  if (!made.ok) await Effect.runPromise(Scope.close(scope, Exit.void))
  return made
}

export const driver: Driver = {
  line: "effect4",
  clientCredentials: (given) =>
    scoped(async (scope) => {
      const made = await run(
        Effect.flatMap(options(given), (o) => ClientCredentials.make(o)),
        scope
      )
      return made.ok ? { ok: true, value: providerOf(made.value, scope) } : made
    }),
  authorizationCode: (given) =>
    scoped(async (scope) => {
      const made = await run(
        Effect.flatMap(options(given), (o) => AuthorizationCode.make(o)),
        scope
      )
      if (!made.ok) return made
      const service = made.value
      const value: AuthorizationCodeProvider = {
        ...providerOf(service, scope),
        getAuthorizationUrl: (urlOptions) => service.getAuthorizationUrl(urlOptions),
        beginAuthorization: async () => {
          const pending = await Effect.runPromise(service.beginAuthorization())
          return { url: pending.url, state: pending.state, codeVerifier: Redacted.value(pending.codeVerifier) }
        },
        completeAuthorization: (callbackUrl, pending) =>
          run(Effect.map(service.completeAuthorization(callbackUrl, pending), tokenShape), scope),
        exchangeCode: (code, codeVerifier) =>
          run(
            Effect.map(service.exchangeCode(code, codeVerifier === undefined ? {} : { codeVerifier }), tokenShape),
            scope
          )
      }
      return { ok: true, value }
    }),
  userTokens: (given) =>
    scoped(async (scope) => {
      const made = await run(
        Effect.flatMap(options(given), (o) =>
          Effect.flatMap(TokenStore.memory(), (store) =>
            Effect.map(UserTokens.make({ ...o, store }), (users) => ({ store, users }))
          )
        ),
        scope
      )
      if (!made.ok) return made
      const { store, users } = made.value
      const value: Users = {
        signIn: (userId, token) =>
          run(
            users.signIn(
              userId,
              new TokenInfo({
                accessToken: Redacted.make(token.accessToken),
                ...(token.refreshToken === undefined ? {} : { refreshToken: Redacted.make(token.refreshToken) }),
                expiresAt: token.expiresAt
              })
            ),
            scope
          ),
        signOut: (userId) => run(users.signOut(userId), scope),
        clearElsewhere: (userId) => run(store(userId).clear ?? Effect.die("the memory store clears"), scope),
        getAccessToken: (userId) => run(Effect.map(users.provider(userId).getAccessToken, Redacted.value), scope),
        close: () => Effect.runPromise(Scope.close(scope, Exit.void))
      }
      return { ok: true, value }
    }),
  oauthClient: (given) =>
    scoped(async (scope) => {
      const made = await run(
        Effect.flatMap(options(given), (o) => OAuthClient.make(o)),
        scope
      )
      if (!made.ok) return made
      const oauth = made.value
      const value: OAuth = {
        authorizationUrl: (urlOptions) => oauth.authorizationUrl(urlOptions),
        beginAuthorization: async () => {
          const pending = await Effect.runPromise(oauth.beginAuthorization())
          return { url: pending.url, state: pending.state, codeVerifier: Redacted.value(pending.codeVerifier) }
        },
        completeAuthorization: (callbackUrl, pending) =>
          run(Effect.map(oauth.completeAuthorization(callbackUrl, pending), tokenShape), scope),
        refresh: (refreshToken) => run(Effect.map(oauth.refresh(refreshToken), tokenShape), scope),
        clientCredentials: () => run(Effect.map(oauth.clientCredentials(), tokenShape), scope)
      }
      return { ok: true, value }
    }),
  parseResponseUrl: (url, expectedState) =>
    scoped((scope) =>
      run(AuthorizationCode.parseResponseUrl(url, expectedState === undefined ? {} : { expectedState }), scope)
    ),
  serviceClient: (given) =>
    scoped(async (scope) => {
      const clientOptions = {
        apiUrl: given.apiUrl,
        ...(given.maxRetries === undefined ? {} : { maxRetries: given.maxRetries }),
        ...(given.maxRetryAfter === undefined ? {} : { maxRetryAfter: given.maxRetryAfter as Duration.Input })
      }
      const made = await run(
        given.accessToken !== undefined
          ? Effect.flatMap(
              ServiceClient.layerAccessToken(given.accessToken, clientOptions).pipe(Layer.build),
              (context) => ServiceClient.pipe(Effect.provide(context))
            )
          : Effect.flatMap(options(given.provider ?? {}), (o) =>
              Effect.flatMap(ClientCredentials.make(o), (provider) => ServiceClient.makeWith(provider, clientOptions))
            ),
        scope
      )
      if (!made.ok) return made
      const client = made.value
      const value: Api = {
        get: (path) => run(client.request("GET", path), scope),
        albumName: (id) =>
          run(
            Effect.map(client.albums.get(id), (album) => album.name),
            scope
          ),
        close: () => Effect.runPromise(Scope.close(scope, Exit.void))
      }
      return { ok: true, value }
    })
}
