/**
 * The per-attempt bound of the client's request policy, through the request's `AbortSignal` instead of forked
 * fibers. An attempt gets an `AbortController` of its own, handed to the platform's `HttpClient` (the one
 * `HttpClient.make` passes as `signal`); a timer aborts it when `timeout` passes, and so does an interruption or a
 * failure of the attempt. The bound covers the whole exchange, headers and body: it is released when the body has
 * been read. Only clients that honour their signal are bounded this way (those of `@effect/platform` and
 * `@effect/platform-node`, and `MockHttpClient`).
 *
 * The controller reaches the platform through `@effect/platform`'s registry of scoped requests (the one
 * `HttpClient.withScope` fills), which is private: `attemptBound.test.ts` fails when an upgrade moves it, and at run
 * time a registry that does not reach the platform falls back to `Effect.timeoutFail` (see {@link isConnected}).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { globalValue } from "effect/GlobalValue"

/** The key of `@effect/platform/HttpClient`'s registry (internal/httpClient.ts, `scopedRequests`). */
export const REGISTRY_KEY = "@effect/platform/HttpClient/scopedRequests"

// The same map whichever module asks first (a bundle may evaluate this module before the platform's).
const registry = globalValue(REGISTRY_KEY, () => new WeakMap<HttpClientRequest.HttpClientRequest, AbortController>())

/** Whether a client of `HttpClient.make` is handed the controller registered for its request. */
const probe = (): boolean => {
  try {
    let seen: AbortSignal | undefined
    const client = HttpClient.make((request, _url, signal) => {
      seen = signal
      return Effect.succeed(HttpClientResponse.fromWeb(request, new Response(null)))
    })
    const request = HttpClientRequest.get("http://127.0.0.1/")
    const controller = new AbortController()
    registry.set(request, controller)
    Effect.runSync(client.execute(request))
    return seen === controller.signal
  } catch {
    return false
  }
}

let probed: boolean | undefined

/**
 * Whether the platform's clients see the attempt's signal (checked once, by a request to a client of
 * `HttpClient.make`); when not, the policy falls back to forked timers.
 */
export const isConnected = (): boolean => {
  probed ??= probe()
  return probed
}

/** The cause of a read or request cut short by the bound. */
export class AttemptTimeout extends Error {
  constructor(readonly timeout: Duration.Duration) {
    super(`no answer within ${Duration.format(timeout)}`)
    this.name = "AttemptTimeout"
  }
}

/** Whether `error` (a platform error) ended because the attempt's bound expired. */
export const isAttemptTimeout = (error: { readonly cause?: unknown }): boolean => error.cause instanceof AttemptTimeout

/** One attempt's bound. */
export class Bound {
  expired = false
  private cancel: (() => void) | undefined
  readonly controller = new AbortController()

  constructor(readonly timeout: Duration.Duration) {}

  /** Timer fired: the attempt is over. */
  readonly expire = () => {
    this.cancel = undefined
    this.expired = true
    this.controller.abort(new AttemptTimeout(this.timeout))
  }

  /** The exchange ended (the body was read): stop the timer. */
  release(): void {
    const cancel = this.cancel
    this.cancel = undefined
    if (cancel !== undefined) cancel()
  }

  /** The attempt failed or was interrupted: stop the timer and let go of the request (its connection). */
  abort(): void {
    this.release()
    if (!this.controller.signal.aborted) this.controller.abort()
  }

  arm(cancel: () => void): void {
    this.cancel = cancel
  }
}

/** The largest delay a JS timer takes; the live clock treats longer sleeps as endless. */
const MAX_TIMER_MILLIS = 2 ** 31 - 1
const liveClock = Clock.make()

/**
 * A bound for sending `request`, armed: a plain timer on the live clock, a daemon fiber sleeping on any other clock
 * (`TestClock`), so tests drive it with `TestClock.adjust`.
 */
export const arm = (request: HttpClientRequest.HttpClientRequest, timeout: Duration.Duration): Effect.Effect<Bound> =>
  Effect.clockWith((clock) => {
    const bound = new Bound(timeout)
    registry.set(request, bound.controller)
    const millis = Duration.toMillis(timeout)
    if (clock.constructor === liveClock.constructor) {
      if (millis <= MAX_TIMER_MILLIS) {
        const timer = setTimeout(bound.expire, millis)
        bound.arm(() => clearTimeout(timer))
      }
      return Effect.succeed(bound)
    }
    return Effect.map(Effect.forkDaemon(Effect.zipRight(Effect.sleep(timeout), Effect.sync(bound.expire))), (fiber) => {
      bound.arm(() => fiber.unsafeInterruptAsFork(fiber.id()))
      return bound
    })
  })
