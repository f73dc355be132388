/**
 * Redis frozen (SIGSTOP: connections open, no replies) while this process renews under the fleet lock. The bound
 * of the contract: no caller waits longer than the cache's command timeout plus one token request because of the
 * cache, so the write after the token request may time out once, but the lock's release must not add another.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import { ClientCredentials } from "@service-sdk/effect"
import * as RedisTokenCache from "../../src/RedisTokenCache.js"
import { describeFaults, sleep, tokenRequests, uniqueKey } from "./support/fleet.js"
import { scaled } from "../support/load.js"

const COMMAND_TIMEOUT_MS = 1000
const TOKEN_DELAY_MS = 800

describeFaults("Redis frozen during a renewal", { tokenLifetime: 3 }, (world) => {
  it.live("the renewing caller waits at most the command timeout plus the token request; the token is served", () =>
    Effect.gen(function* () {
      const cache = yield* RedisTokenCache.make({
        url: world().redis.url,
        key: uniqueKey(),
        commandTimeout: `${COMMAND_TIMEOUT_MS} millis`,
        lockTtl: "2 seconds"
      })
      const provider = yield* ClientCredentials.make({
        clientId: world().emulator.clientId,
        clientSecret: world().emulator.clientSecret,
        authUrl: world().emulator.authUrl,
        tokenCache: cache
      })
      const before = (yield* Effect.promise(() => tokenRequests(world()))).total
      // the token answer takes 800 ms; Redis freezes while it is on its way, so the write and the release meet it
      yield* Effect.promise(() => world().emulator.injectFault({ target: "token", count: 1, delayMs: TOKEN_DELAY_MS }))
      const call = yield* Effect.fork(Effect.timed(provider.getAccessToken))
      yield* Effect.promise(() => sleep(300))
      world().redis.signal("SIGSTOP")
      const [took, token] = yield* Fiber.join(call).pipe(
        Effect.ensuring(Effect.sync(() => world().redis.signal("SIGCONT")))
      )
      console.info(`Redis frozen during a renewal: the call took ${Math.round(Duration.toMillis(took))} ms`)
      expect(Redacted.value(token).length).toBeGreaterThan(0)
      expect((yield* Effect.promise(() => tokenRequests(world()))).total - before).toBe(1)
      // one command timeout (the write) plus the token request, and scheduling slack; never a second timeout
      expect(Duration.toMillis(took)).toBeLessThan(COMMAND_TIMEOUT_MS + TOKEN_DELAY_MS + scaled(750))
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
  )
})
