/** `AsyncAuthorizationCode#authorizeLocal` and `asyncAuthorizeLocal`: the loopback sign-in from plain code. */
import * as Net from "node:net"
import type { FacadeLine, MockHandler, RecordedRequest, SdkError } from "./line.js"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const canBind = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = Net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/** What a browser does after consent: follow the redirect with the code (and the state of the URL). */
export const redirectBack = async (authorizationUrl: string, params: Record<string, string>) => {
  const url = new URL(authorizationUrl)
  const callback = new URL(url.searchParams.get("redirect_uri")!)
  const state = url.searchParams.get("state")
  for (const [key, value] of Object.entries({ ...(state !== null ? { state } : {}), ...params })) {
    callback.searchParams.set(key, value)
  }
  const response = await fetch(callback)
  return { status: response.status, body: await response.text() }
}

/**
 * An `AsyncAuthorizationCode` of `line` on a free loopback port, with a mock token endpoint (answering with
 * `handler`, by default tokens `user-access`/`user-refresh`) that records what it was sent.
 */
export const loopbackProvider = async (line: FacadeLine, handler?: MockHandler) => {
  const { MockHttpClient } = line.testing
  const answer: MockHandler =
    handler ??
    (() =>
      MockHttpClient.json({
        access_token: "user-access",
        token_type: "Bearer",
        expires_in: 3600,
        refresh_token: "user-refresh"
      }))
  const port = await freePort()
  const requests: Array<RecordedRequest> = []
  const provider = new line.facade.AsyncAuthorizationCode({
    clientId: "client-id",
    clientSecret: "client-secret",
    authUrl: "http://auth.test",
    redirectUri: `http://127.0.0.1:${port}/callback`,
    httpClient: MockHttpClient.layer((request: RecordedRequest, call: number) => {
      requests.push(request)
      return answer(request, call)
    })
  })
  return { port, provider, requests }
}

/**
 * A sign-in (`authorizeLocal`, state `expected-state`) whose first callback carries another state, as a forged one
 * would: how the sign-in ended, and the status of the page that callback got.
 */
const signInWithForgedState = async (line: FacadeLine, timeout: number) => {
  const { provider, requests } = await loopbackProvider(line)
  await using _ = provider
  let forged: Promise<{ readonly status: number }> | undefined
  const outcome = await provider
    .authorizeLocal({
      openBrowser: false,
      state: "expected-state",
      timeout,
      onAuthorizationUrl: (url: string) => {
        forged = redirectBack(url, { code: "c", state: "other-state" })
      }
    })
    .then(
      (token: unknown) => ({ token, error: undefined }),
      (error: unknown) => ({ token: undefined, error })
    )
  return { ...outcome, forgedStatus: (await forged)?.status, requests }
}

/** The suite on one line. */
export const authorizeLocal = (line: FacadeLine): void => {
  const { afterEach, beforeEach, describe, expect, it } = line.test
  const { AuthenticationError, asyncAuthorizeLocal, ConfigurationError, ServiceError, TokenInfo, tokenInfoToJson } =
    line.facade
  const { Effect } = line.effect
  const { signedInPage } = line.wording
  const makeProvider = () => loopbackProvider(line)

  const savedRedirect = process.env.SERVICE_SDK_REDIRECT_URI
  beforeEach(() => {
    delete process.env.SERVICE_SDK_REDIRECT_URI
  })
  afterEach(() => {
    if (savedRedirect !== undefined) process.env.SERVICE_SDK_REDIRECT_URI = savedRedirect
  })

  describe("AsyncAuthorizationCode#authorizeLocal and asyncAuthorizeLocal", () => {
    it("resolves to the tokens when an async onAuthorizationUrl drives the redirect, and caches them", async () => {
      const { port, provider, requests } = await makeProvider()
      await using _ = provider
      let page: { status: number; body: string } | undefined
      const token = await provider.authorizeLocal({
        openBrowser: false,
        scope: "user-read-private",
        onAuthorizationUrl: async (url: string) => {
          expect(new URL(url).searchParams.get("scope")).toBe("user-read-private")
          // Awaiting the whole redirect inside the callback must not deadlock the flow.
          page = await redirectBack(url, { code: "promise-code" })
        }
      })
      expect(token).toBeInstanceOf(TokenInfo)
      expect(page?.status).toBe(200)
      // the success page, worded by each line (FacadeLine.wording)
      expect(page?.body).toContain(signedInPage)
      expect(requests).toHaveLength(1)
      expect(requests[0]!.form.get("code")).toBe("promise-code")
      expect(requests[0]!.form.get("redirect_uri")).toBe(`http://127.0.0.1:${port}/callback`)
      expect(await provider.getAccessToken()).toBe("user-access")
      expect(requests).toHaveLength(1)
      expect(await canBind(port)).toBe(true)
    })

    it("answers another method with 405 (Allow: GET) and another path with 404; pages are never cached nor referred", async () => {
      const { provider } = await makeProvider()
      await using _ = provider
      const seen: Array<{ status: number; allow: string | null; cache: string | null; referrer: string | null }> = []
      await provider.authorizeLocal({
        openBrowser: false,
        onAuthorizationUrl: async (url: string) => {
          const callback = new URL(new URL(url).searchParams.get("redirect_uri")!)
          for (const [target, method] of [
            [callback, "POST"],
            [new URL("/elsewhere", callback), "GET"]
          ] as const) {
            const response = await fetch(target, { method })
            await response.text()
            seen.push({
              status: response.status,
              allow: response.headers.get("allow"),
              cache: response.headers.get("cache-control"),
              referrer: response.headers.get("referrer-policy")
            })
          }
          await redirectBack(url, { code: "c" })
        }
      })
      expect(seen).toEqual([
        { status: 405, allow: "GET", cache: "no-store", referrer: "no-referrer" },
        { status: 404, allow: null, cache: "no-store", referrer: "no-referrer" }
      ])
    })

    it("asyncAuthorizeLocal with a plain callback works the same", async () => {
      const { provider } = await makeProvider()
      await using _ = provider
      const token = await asyncAuthorizeLocal(provider, {
        openBrowser: false,
        onAuthorizationUrl: (url: string) => {
          void redirectBack(url, { code: "c" })
        }
      })
      expect(tokenInfoToJson(token)).toMatchObject({ access_token: "user-access", refresh_token: "user-refresh" })
      expect(await provider.getAccessToken()).toBe("user-access")
    })

    it("rejects with an AuthenticationError instance carrying the payload on error=access_denied", async () => {
      const { provider, requests } = await makeProvider()
      await using _ = provider
      let browser: Promise<{ status: number; body: string }> | undefined
      // On failure the flow does not wait for the callback: the browser's page is checked on its own.
      const error = await asyncAuthorizeLocal(provider, {
        openBrowser: false,
        onAuthorizationUrl: async (url: string) => {
          browser = redirectBack(url, { error: "access_denied" })
          await browser
        }
      }).then(
        () => undefined,
        (error: unknown) => error
      )
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(error).toBeInstanceOf(ServiceError)
      expect((error as SdkError).payload?.error).toBe("access_denied")
      const page = await browser
      expect(page?.status).toBe(400)
      expect(page?.body).toContain("access_denied")
      expect(requests).toHaveLength(0)
    })

    it("a callback with another state gets a 400 page and is ignored (no exchange); the sign-in times out", async () => {
      const { error, forgedStatus, requests } = await signInWithForgedState(line, 1500)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect((error as Error).message).toMatch(/timed out/)
      expect(forgedStatus).toBe(400)
      expect(requests).toHaveLength(0)
    })

    it("a request without the state gets a 400 page and is ignored: the real callback then signs in", async () => {
      const { provider, requests } = await makeProvider()
      await using _ = provider
      let probe: { status: number } | undefined
      const token = await provider.authorizeLocal({
        openBrowser: false,
        timeout: 5_000,
        onAuthorizationUrl: async (url: string) => {
          const callback = new URL(new URL(url).searchParams.get("redirect_uri")!)
          callback.searchParams.set("code", "probe-code")
          probe = { status: (await fetch(callback)).status }
          void redirectBack(url, { code: "real-code" })
        }
      })
      expect(token).toBeInstanceOf(TokenInfo)
      expect(probe?.status).toBe(400)
      expect(requests.map((request) => request.form.get("code"))).toEqual(["real-code"])
    })

    it("rejects with AuthenticationError on timeout, and frees the port", async () => {
      const { port, provider } = await makeProvider()
      await using _ = provider
      const error = await provider
        .authorizeLocal({ openBrowser: false, timeout: 150, onAuthorizationUrl: () => {} })
        .then(
          () => undefined,
          (error: unknown) => error
        )
      expect(error).toBeInstanceOf(AuthenticationError)
      expect((error as Error).message).toContain("timed out")
      expect(await canBind(port)).toBe(true)
    })

    it("rejects with ConfigurationError for openBrowser: false without a callback, and for a port in use", async () => {
      const { port, provider } = await makeProvider()
      await using _ = provider
      await expect(provider.authorizeLocal({ openBrowser: false })).rejects.toBeInstanceOf(ConfigurationError)

      const blocker = Net.createServer()
      await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve))
      try {
        const error = await provider.authorizeLocal({ openBrowser: false, onAuthorizationUrl: () => {} }).then(
          () => undefined,
          (error: unknown) => error
        )
        expect(error).toBeInstanceOf(ConfigurationError)
        expect((error as Error).message).toContain(String(port))
      } finally {
        await new Promise<void>((resolve) => blocker.close(() => resolve()))
      }
    })

    it("rejects with the callback's own rejection", async () => {
      const { port, provider } = await makeProvider()
      await using _ = provider
      const error = await provider
        .authorizeLocal({
          openBrowser: false,
          onAuthorizationUrl: () => Promise.reject(new RangeError("no terminal"))
        })
        .then(
          () => undefined,
          (error: unknown) => error
        )
      expect(error).toBeInstanceOf(RangeError)
      expect((error as Error).message).toBe("no terminal")
      expect(await canBind(port)).toBe(true)
    })

    it("accepts an Effect from onAuthorizationUrl too", async () => {
      const { provider } = await makeProvider()
      await using _ = provider
      const token = await provider.authorizeLocal({
        openBrowser: false,
        onAuthorizationUrl: (url: string) => Effect.asVoid(Effect.promise(() => redirectBack(url, { code: "c" })))
      })
      expect(token).toBeInstanceOf(TokenInfo)
    })

    it("rejects with ConfigurationError once the provider is closed", async () => {
      const { provider } = await makeProvider()
      await provider.close()
      await expect(
        provider.authorizeLocal({ openBrowser: false, onAuthorizationUrl: () => {} })
      ).rejects.toBeInstanceOf(ConfigurationError)
    })
  })
}
