/**
 * The client's per-attempt bound on the live clock, over real loopback HTTP with undici: slow attempts against the
 * emulator, and a stalled body and an interruption against a bare `node:http` server (the emulator cannot stall a
 * body half-way, and the bare server shows when the connection is closed).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { ServiceClient, TransportError } from "@service-sdk/effect"
import { HttpLive, statsSince, userSession } from "./harness.js"

describe("per-attempt bound against the emulator (live clock)", () => {
  it.live("a slow first attempt is cut at `timeout` and the retry answers", () =>
    Effect.gen(function* () {
      // a bound that a retry on a loaded machine still answers within; the slow attempt is far beyond it
      const { emulator, client } = yield* userSession({ client: { timeout: "2 seconds", maxRetries: 2 } })
      yield* emulator.injectFault({ target: "api", delayMs: 30_000, count: 1 })
      const since = yield* statsSince(emulator)
      const me = yield* client.users.me
      expect(me.id).toBe("emulator-user")
      expect((yield* since).api).toBe(2)
    }).pipe(Effect.scoped, Effect.provide(HttpLive))
  )

  it.live("attempts that are always slow fail with TransportError after the retries", () =>
    Effect.gen(function* () {
      const { emulator, client } = yield* userSession({ client: { timeout: "300 millis", maxRetries: 1 } })
      yield* emulator.injectFault({ target: "api", delayMs: 5_000, count: 2 })
      const since = yield* statsSince(emulator)
      const error = yield* Effect.flip(client.users.me)
      expect(error).toBeInstanceOf(TransportError)
      expect(error.message).toMatch(/within/)
      expect((yield* since).api).toBe(2)
    }).pipe(Effect.scoped, Effect.provide(HttpLive))
  )
})

interface Bare {
  readonly url: string
  /** resolves when a request arrives */
  readonly arrived: Deferred.Deferred<void>
  /** resolves when the request's connection is closed by the client */
  readonly closed: Deferred.Deferred<void>
}

/** A loopback server that hands each request to `handle` and reports arrivals and closed connections. */
const bareServer = (handle: (request: IncomingMessage, response: ServerResponse) => void) =>
  Effect.gen(function* () {
    const arrived = yield* Deferred.make<void>()
    const closed = yield* Deferred.make<void>()
    const server = yield* Effect.acquireRelease(
      Effect.async<Server>((resume) => {
        const server = createServer((request, response) => {
          Deferred.unsafeDone(arrived, Effect.void)
          request.socket.once("close", () => Deferred.unsafeDone(closed, Effect.void))
          handle(request, response)
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const { port } = server.address() as AddressInfo
    return { url: `http://127.0.0.1:${port}/v1`, arrived, closed } satisfies Bare
  })

/** A client on `bare`, alive for the test's scope. */
const clientOn = (bare: Bare, options: ServiceClient.Options) =>
  Effect.map(
    Layer.build(
      ServiceClient.layerAccessToken("bare-token", { apiUrl: bare.url, ...options }).pipe(Layer.provide(HttpLive))
    ),
    (context) => Context.get(context, ServiceClient)
  )

describe("per-attempt bound against a bare server (live clock)", () => {
  it.live("a body that stalls half-way fails with TransportError, and the connection is closed", () =>
    Effect.gen(function* () {
      const bare = yield* bareServer((_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write('{"id": "u", "display')
      })
      const client = yield* clientOn(bare, { timeout: "300 millis", maxRetries: 0 })
      const error = yield* Effect.flip(client.users.me)
      expect(error).toBeInstanceOf(TransportError)
      expect(error.message).toMatch(/did not arrive within/)
      yield* Deferred.await(bare.closed).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.scoped)
  )

  it.live("interrupting the caller aborts the request and closes its connection", () =>
    Effect.gen(function* () {
      const bare = yield* bareServer(() => {})
      const client = yield* clientOn(bare, { timeout: "30 seconds" })
      const fiber = yield* Effect.fork(client.users.me)
      yield* Deferred.await(bare.arrived).pipe(Effect.timeout("5 seconds"))
      expect(yield* Deferred.isDone(bare.closed)).toBe(false)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(bare.closed).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.scoped)
  )
})
