/**
 * The package's plain types against the facade's own (`service-sdk/promise`), checked by the compiler (`tsc -b`
 * type-checks this file; vitest runs it too): the same option names on both sides, every plain input one the facade
 * takes, every facade output one the plain type describes. A change on either side (an option added to one only, a
 * type narrowed or widened) fails here.
 */
import { describe, expectTypeOf, it } from "@effect/vitest"
import type * as Plain from "@service-sdk/promise"
import type * as Facade from "../../effect4/service-sdk/src/promise.js"

/** The options a constructor takes. */
type OptionsOf<C> = C extends abstract new (options?: infer O, ...rest: infer _) => unknown ? NonNullable<O> : never

/** Options only the facade has: an Effect `HttpClient` layer (plain code gets the default client). */
type FacadeOnly = "httpClient"

/** Plain values that are opaque descriptions of an Effect one (a connected Redis cache is an Effect `TokenCache`). */
type Opaque = "tokenCache" | "store" | "authProvider"

/** The keys of `P` whose plain type the facade does not take. */
type NotTaken<P, F> = {
  [K in Exclude<keyof P & keyof F, Opaque>]-?: [P[K]] extends [F[K]] ? never : K
}[Exclude<keyof P & keyof F, Opaque>]

/** Both sides name the same options, and the facade takes every plain value. */
type Agree<P, F> = {
  readonly onlyPlain: Exclude<keyof P, keyof F>
  readonly onlyFacade: Exclude<keyof F, keyof P | FacadeOnly>
  readonly notTaken: NotTaken<P, F>
}
type Agreed = { readonly onlyPlain: never; readonly onlyFacade: never; readonly notTaken: never }

/** The same member names on the plain interface and on the facade's class (its public side). */
type SameMembers<P, F> = {
  readonly onlyPlain: Exclude<keyof P, keyof F>
  readonly onlyFacade: Exclude<keyof F, keyof P>
}
type Same = { readonly onlyPlain: never; readonly onlyFacade: never }

describe("@service-sdk/promise's plain types say what the facade's say", () => {
  it("constructor options: the same names, and the facade takes every plain value", () => {
    expectTypeOf<
      Agree<Plain.ClientCredentialsOptions, OptionsOf<typeof Facade.AsyncClientCredentials>>
    >().toEqualTypeOf<Agreed>()
    expectTypeOf<
      Agree<Plain.AuthorizationCodeOptions, OptionsOf<typeof Facade.AsyncAuthorizationCode>>
    >().toEqualTypeOf<Agreed>()
    expectTypeOf<Agree<Plain.AsyncUserTokensOptions, Facade.AsyncUserTokensOptions>>().toEqualTypeOf<Agreed>()
    expectTypeOf<Agree<Plain.AsyncServiceClientOptions, Facade.AsyncServiceClientOptions>>().toEqualTypeOf<Agreed>()
  })

  it("method options: sign-in URLs, beginAuthorization, authorizeLocal", () => {
    type UrlOptions = NonNullable<Parameters<Facade.AsyncAuthorizationCode["getAuthorizationUrl"]>[0]>
    type BeginOptions = NonNullable<Parameters<Facade.AsyncAuthorizationCode["beginAuthorization"]>[0]>
    expectTypeOf<Agree<Plain.AuthorizationUrlOptions, UrlOptions>>().toEqualTypeOf<Agreed>()
    expectTypeOf<Agree<Plain.BeginAuthorizationOptions, BeginOptions>>().toEqualTypeOf<Agreed>()
    expectTypeOf<
      Agree<
        Omit<Plain.AuthorizeLocalOptions, "onAuthorizationUrl">,
        Omit<Facade.AsyncAuthorizeLocalOptions, "onAuthorizationUrl">
      >
    >().toEqualTypeOf<Agreed>()
  })

  it("outputs: tokens, their JSON form and the errors' fields fit the plain types", () => {
    expectTypeOf<SameMembers<Plain.TokenInfoJson, Facade.TokenInfoJson>>().toEqualTypeOf<Same>()
    expectTypeOf<Facade.TokenInfoJson>().toMatchTypeOf<Plain.TokenInfoJson>()
    // (a plain `refresh_rejected` may be `false`, which reads as not rejected; the facade writes only `true`)
    type FacadeTokenFields = { readonly [K in keyof Facade.TokenInfo as K extends `${string}` ? K : never]: unknown }
    expectTypeOf<keyof Plain.TokenInfo>().toEqualTypeOf<Exclude<keyof FacadeTokenFields, keyof object>>()
    expectTypeOf<Facade.TokenInfo>().toMatchTypeOf<Plain.TokenInfo>()
    expectTypeOf<Facade.AuthenticationError["payload"]>().toMatchTypeOf<Plain.AuthenticationError["payload"]>()
    expectTypeOf<Plain.ErrorPayload>().toMatchTypeOf<NonNullable<Facade.AuthenticationError["payload"]>>()
  })

  it("the classes: the same methods, and what they resolve to fits", () => {
    expectTypeOf<SameMembers<Plain.AsyncClientCredentials, Facade.AsyncClientCredentials>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Plain.AsyncAuthorizationCode, Facade.AsyncAuthorizationCode>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Plain.AsyncUserTokens, Facade.AsyncUserTokens>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Plain.AsyncServiceClient, Facade.AsyncServiceClient>>().toEqualTypeOf<Same>()
    expectTypeOf<Facade.AsyncAuthorizationCode["exchangeCode"]>().returns.resolves.toMatchTypeOf<Plain.TokenInfo>()
    expectTypeOf<Facade.AsyncServiceClient["users"]["me"]>().returns.resolves.toMatchTypeOf<Plain.User>()
  })
})
