import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Emulator, EmulatorError } from "../src/internal/effectApi.js"
import { api, authorizeUrl, form, REDIRECT_URI, request, requestIdOf, tokenRequest } from "./utils.js"

const FORM = "application/x-www-form-urlencoded"

/** Presses #approve on a consent page with the `#user` field set to `user` (or left as is). */
const approveAs = (emulator: Emulator.Service, params: Record<string, string>, user?: string) =>
  Effect.gen(function* () {
    const page = yield* request(authorizeUrl(emulator, params))
    if (page.status === 302) return { page, reply: page }
    const body: Record<string, string> = { request_id: requestIdOf(page.text), decision: "approve" }
    if (user !== undefined) body.user = user
    const reply = yield* request(`${emulator.authUrl}/authorize/decision`, {
      method: "POST",
      headers: { "content-type": FORM },
      body: form(body)
    })
    return { page, reply }
  })

const exchange = (emulator: Emulator.Service, location: string) =>
  Effect.flatMap(
    tokenRequest(emulator, {
      grant_type: "authorization_code",
      code: new URL(location).searchParams.get("code")!,
      redirect_uri: REDIRECT_URI
    }),
    (reply) =>
      reply.status === 200
        ? Effect.succeed(reply.json as { access_token: string; refresh_token: string })
        : Effect.die(reply.text)
  )

const meId = (emulator: Emulator.Service, token: string) =>
  Effect.map(api(emulator, "/me", token), (reply) => (reply.status === 200 ? reply.json.id : `status ${reply.status}`))

const savedIds = (emulator: Emulator.Service, token: string) =>
  Effect.map(api(emulator, "/me/tracks?limit=50", token), (reply) => {
    expect(reply.status).toBe(200)
    return (reply.json.items as ReadonlyArray<{ track: { id: string } }>).map((item) => item.track.id)
  })

describe("many users", () => {
  it.scopedLive("the consent page has a #user field, emulator-user by default, login_hint preselects it", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const plain = yield* request(authorizeUrl(emulator, { scope: "user-read-private" }))
      expect(plain.text).toMatch(/<input id="user" name="user" type="text" value="emulator-user"/)
      const hinted = yield* request(authorizeUrl(emulator, { login_hint: "alice_01" }))
      expect(hinted.text).toMatch(/<input id="user" name="user" type="text" value="alice_01"/)
      expect(hinted.text).not.toContain('value="emulator-user"')
    })
  )

  it.scopedLive("the user typed in #user owns the code's tokens; the default is emulator-user", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const bob = yield* approveAs(emulator, { scope: "user-read-private" }, "bob-2")
      expect(bob.reply.status).toBe(302)
      const bobTokens = yield* exchange(emulator, bob.reply.headers.get("location")!)
      expect(yield* meId(emulator, bobTokens.access_token)).toBe("bob-2")

      // login_hint preselects; the form's value decides (the browser posts the field)
      const carol = yield* approveAs(emulator, { login_hint: "alice" }, "carol")
      expect(
        yield* meId(emulator, (yield* exchange(emulator, carol.reply.headers.get("location")!)).access_token)
      ).toBe("carol")
      // a form without the field (an old client) signs in the preselected user
      const hinted = yield* approveAs(emulator, { login_hint: "alice" })
      expect(
        yield* meId(emulator, (yield* exchange(emulator, hinted.reply.headers.get("location")!)).access_token)
      ).toBe("alice")
      const plain = yield* approveAs(emulator, {})
      expect(
        yield* meId(emulator, (yield* exchange(emulator, plain.reply.headers.get("location")!)).access_token)
      ).toBe("emulator-user")
    })
  )

  it.scopedLive("a refreshed token belongs to the same user", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ rotateRefreshTokens: true })
      const dave = yield* approveAs(emulator, {}, "dave")
      const tokens = yield* exchange(emulator, dave.reply.headers.get("location")!)
      const refreshed = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token
      })
      expect(refreshed.status).toBe(200)
      expect(yield* meId(emulator, refreshed.json.access_token)).toBe("dave")
    })
  )

  it.scopedLive("login_hint is the user when autoApprove is on", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const erin = yield* approveAs(emulator, { login_hint: "erin", state: "s" })
      expect(erin.reply.status).toBe(302)
      const tokens = yield* exchange(emulator, erin.reply.headers.get("location")!)
      expect(yield* meId(emulator, tokens.access_token)).toBe("erin")
      const plain = yield* approveAs(emulator, {})
      expect(
        yield* meId(emulator, (yield* exchange(emulator, plain.reply.headers.get("location")!)).access_token)
      ).toBe("emulator-user")
    })
  )

  it.scopedLive("an invalid login_hint redirects with invalid_request; an invalid #user gets an error page", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      for (const hint of ["", "a/b", "../x", "é", "x".repeat(65), "a b"]) {
        const reply = yield* request(authorizeUrl(emulator, { login_hint: hint, state: "st" }))
        expect(reply.status, hint).toBe(302)
        const location = new URL(reply.headers.get("location")!)
        expect(location.searchParams.get("error")).toBe("invalid_request")
        expect(location.searchParams.get("error_description")).toContain("login_hint")
        expect(location.searchParams.get("state")).toBe("st")
      }
      expect((yield* request(authorizeUrl(emulator, { login_hint: "x".repeat(64) }))).status).toBe(200)

      const page = yield* request(authorizeUrl(emulator, {}))
      const requestId = requestIdOf(page.text)
      const post = (user: string) =>
        request(`${emulator.authUrl}/authorize/decision`, {
          method: "POST",
          headers: { "content-type": FORM },
          body: form({ request_id: requestId, decision: "approve", user })
        })
      const bad = yield* post("<script>")
      expect(bad.status).toBe(400)
      expect(bad.headers.get("location")).toBeNull()
      expect(bad.text).toContain("Invalid user id")
      expect(bad.text).not.toContain("<script>")
      // the request is still pending: a corrected id goes through
      const good = yield* post("frank")
      expect(good.status).toBe(302)
      expect(yield* meId(emulator, (yield* exchange(emulator, good.headers.get("location")!)).access_token)).toBe(
        "frank"
      )
    })
  )

  it.scopedLive("/v1/me answers each user's own profile; scopes still govern email and country", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const alice = yield* emulator.signIn({ userId: "alice", scope: "user-read-private user-read-email" })
      const me = yield* api(emulator, "/me", alice.access_token)
      expect(me.json).toMatchObject({
        id: "alice",
        display_name: "alice",
        email: "alice@example.com",
        country: "SE",
        type: "user",
        uri: "service:user:alice"
      })
      const narrow = yield* emulator.signIn({ userId: "alice", scope: [] })
      const plain = yield* api(emulator, "/me", narrow.access_token)
      expect(plain.json.id).toBe("alice")
      expect(plain.json.email).toBeUndefined()
      expect(plain.json.country).toBeUndefined()
      const fixture = yield* emulator.signIn({ userId: "emulator-user" })
      expect((yield* api(emulator, "/me", fixture.access_token)).json).toMatchObject({
        id: "emulator-user",
        display_name: "Emulator User"
      })
    })
  )

  it.scopedLive("each user has their own library: fixture tracks differ, saves and removals stay with their user", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const alice = (yield* emulator.signIn({ userId: "alice" })).access_token
      const bob = (yield* emulator.signIn({ userId: "bob" })).access_token
      const fixture = (yield* emulator.signIn({ userId: "emulator-user" })).access_token
      const aliceStart = yield* savedIds(emulator, alice)
      const bobStart = yield* savedIds(emulator, bob)
      expect(aliceStart).toHaveLength(12)
      expect(bobStart).toHaveLength(12)
      expect(aliceStart).not.toEqual(bobStart)
      expect((yield* savedIds(emulator, fixture)).length).toBe(31) // 30 catalogue tracks and the local file
      // a second token of the same user sees the same library (stable)
      const alice2 = (yield* emulator.signIn({ userId: "alice" })).access_token
      expect(yield* savedIds(emulator, alice2)).toEqual(aliceStart)

      const extra = (yield* savedIds(emulator, fixture)).find((id) => !aliceStart.includes(id))!
      expect((yield* api(emulator, `/me/tracks?ids=${extra}`, alice, { method: "PUT" })).status).toBe(200)
      expect((yield* savedIds(emulator, alice))[0]).toBe(extra)
      expect(yield* savedIds(emulator, bob)).toEqual(bobStart)
      const removed = bobStart[0]!
      expect((yield* api(emulator, `/me/tracks?ids=${removed}`, bob, { method: "DELETE" })).status).toBe(200)
      expect(yield* savedIds(emulator, bob)).not.toContain(removed)
      expect(yield* savedIds(emulator, alice)).toEqual([extra, ...aliceStart])

      // reset brings every library back to its start
      yield* emulator.reset
      const again = (yield* emulator.signIn({ userId: "alice" })).access_token
      expect(yield* savedIds(emulator, again)).toEqual(aliceStart)
    })
  )

  it.scopedLive("signIn issues working tokens for the default client, without counting a token request", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 120 })
      const tokens = yield* emulator.signIn({ userId: "grace" })
      expect(Object.keys(tokens).sort()).toEqual(["access_token", "expires_in", "refresh_token", "scope"])
      expect(tokens.expires_in).toBe(120)
      expect(tokens.scope.split(" ")).toContain("user-library-read")
      expect((yield* emulator.stats).tokenRequests.total).toBe(0)
      // a first token of its own lifetime (staggered expiries); refreshes get the configured one
      const short = yield* emulator.signIn({ userId: "grace", expiresIn: 7 })
      expect(short.expires_in).toBe(7)
      const renewed = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: short.refresh_token })
      expect(renewed.json.expires_in).toBe(120)
      // the refresh token works at the token endpoint for the default client, and stays grace's
      const refreshed = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token
      })
      expect(refreshed.status).toBe(200)
      expect(yield* meId(emulator, refreshed.json.access_token)).toBe("grace")
      // revoking it takes the access token with it
      expect(yield* emulator.revoke(tokens.refresh_token)).toBe(true)
      expect(yield* meId(emulator, tokens.access_token)).toBe("status 401")
    })
  )

  it.scopedLive("signIn refuses bad user ids, unknown scopes and unknown clients with an EmulatorError", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      for (const options of [
        { userId: "" },
        { userId: "a/b" },
        { userId: "x".repeat(65) },
        { userId: 42 as unknown as string },
        { userId: "ok", scope: "user-read-private nope" },
        { userId: "ok", clientId: "nobody" },
        { userId: "ok", expiresIn: -1 },
        { userId: "ok", expiresIn: 1.5 }
      ]) {
        const exit = yield* Effect.exit(emulator.signIn(options))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          expect(error).toBeInstanceOf(EmulatorError)
          expect(error?.message).toMatch(/^Invalid signIn: /)
        }
      }
      const publicTokens = yield* emulator.signIn({ userId: "ok", clientId: emulator.publicClientId })
      const refreshed = yield* tokenRequest(
        emulator,
        { grant_type: "refresh_token", refresh_token: publicTokens.refresh_token, client_id: emulator.publicClientId },
        null
      )
      expect(refreshed.status).toBe(200)
    })
  )

  it.live("the Promise handle signs users in and reports requests by user", () =>
    Effect.promise(async () => {
      await using emulator = await Emulator.start()
      const heidi = await emulator.signIn({ userId: "heidi", scope: "user-library-read" })
      const ivan = await emulator.signIn({ userId: "ivan" })
      const get = (path: string, token: string) =>
        fetch(`${emulator.apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())
      expect((await get("/me", heidi.access_token)).id).toBe("heidi")
      expect((await get("/me", ivan.access_token)).id).toBe("ivan")
      await get("/me/tracks", ivan.access_token)
      // a 403 for missing scope still names its user (the bearer was valid)
      await fetch(`${emulator.apiUrl}/me/following?type=artist`, {
        headers: { authorization: `Bearer ${heidi.access_token}` }
      })
      expect(await emulator.apiRequestsByUser()).toEqual({ heidi: 2, ivan: 2 })
      await emulator.reset()
      expect(await emulator.apiRequestsByUser()).toEqual({})
    })
  )
})
