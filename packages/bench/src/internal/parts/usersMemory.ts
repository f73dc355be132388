/**
 * Part 10. Many users' memory: `UserTokens` over `TokenStore.directory` with every user signed in, then a few active.
 * After `idleTimeToLive` the heap retained follows the active users only: bytes per active user, and what each idle
 * user still costs (≈ 0), both against the heap of the same `UserTokens` before any user was seen.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { TokenInfo, TokenStore, UserTokens } from "@service-sdk/effect"
import { type Context, credentials } from "../context.js"
import { gc } from "../machine.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"

const IDLE_MS = 1_000

const heapUsed = async () => {
  await gc()
  return process.memoryUsage().heapUsed
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const usersMemory = async (context: Context): Promise<PartResult> => {
  const signedIn = context.quick ? 1_000 : 100_000
  const active = context.quick ? 50 : 1_000
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-bench-users-"))
  const scope = await run(Scope.make())
  try {
    const store = await run(TokenStore.directory(join(dir, "tokens")).pipe(Effect.provide(NodeFileSystem.layer)))
    const users = await run(
      UserTokens.make({ ...credentials(context), store, idleTimeToLive: `${IDLE_MS} millis` }).pipe(
        Effect.provideService(HttpClient.HttpClient, context.http),
        Scope.extend(scope)
      )
    )
    const ids = Array.from({ length: signedIn }, (_, i) => `user-${i}`)
    // the SDK's own time source, as its providers read it
    const expiresAt = (await run(Clock.currentTimeMillis)) / 1000 + 3600
    const token = (id: string) =>
      new TokenInfo({
        accessToken: Redacted.make(`${id}-access`),
        refreshToken: Redacted.make(`${id}-refresh`),
        expiresAt
      })
    const touch = (count: number) =>
      run(
        Effect.forEach(ids.slice(0, count), (id) => users.provider(id).getAccessToken, {
          concurrency: 64,
          discard: true
        })
      )
    // warm-up at a small scale (compiled code, lazy initialisation), then every user gone idle
    await run(Effect.forEach(ids.slice(0, 100), (id) => users.signIn(id, token(id)), { discard: true }))
    await touch(100)
    await sleep(IDLE_MS * 1.5)
    const before = await heapUsed()

    const start = performance.now()
    await run(Effect.forEach(ids, (id) => users.signIn(id, token(id)), { concurrency: 64, discard: true }))
    const signInSeconds = (performance.now() - start) / 1000
    // the active users keep calling while everyone else's state reaches its idle time to live (thrice over: 100,000
    // expiries take a while on a busy machine)
    const until = performance.now() + IDLE_MS * 3
    while (performance.now() < until) {
      await touch(active)
      await sleep(IDLE_MS / 4)
    }
    await touch(active)
    const withActive = await heapUsed()
    await sleep(IDLE_MS * 3)
    const allIdle = await heapUsed()

    const perActive = (withActive - before) / active
    const perIdle = (allIdle - before) / signedIn
    const n = (value: number) => value.toLocaleString("en-US")
    return {
      title: "Many users: memory after idleTimeToLive",
      figures: [
        figure(
          {
            label: `heap per active user (${n(active)} active of ${n(signedIn)} signed in)`,
            value: perActive,
            unit: "bytes"
          },
          {
            baseline: { label: "heap before any user, after gc()", value: before / (1024 * 1024), unit: "MB" },
            target: { on: "value", op: "<", limit: 32 * 1024 }
          }
        ),
        figure(
          { label: `heap per idle user (${n(signedIn)} signed in, all idle)`, value: perIdle, unit: "bytes" },
          {
            baseline: { label: "heap before any user, after gc()", value: before / (1024 * 1024), unit: "MB" },
            // what an idle user still costs, against what an active one does
            ratio: { ratio: perIdle / perActive, min: perIdle / perActive, max: perIdle / perActive },
            target: { on: "value", op: "<", limit: 64 }
          }
        )
      ],
      notes: [
        `${n(signedIn)} users signed in through UserTokens.signIn over TokenStore.directory (one 0600 file each, ${signInSeconds.toFixed(1)} s), idleTimeToLive ${IDLE_MS} ms; then ${n(active)} users call getAccessToken every ${IDLE_MS / 4} ms while the others' state expires`,
        "per active user = (heap with the active users' state − heap before) / active; per idle user = (heap once all are idle − heap before) / signed in (ratio: per idle user over per active user)"
      ],
      data: {
        signedIn,
        active,
        idleMs: IDLE_MS,
        beforeBytes: before,
        withActiveBytes: withActive,
        allIdleBytes: allIdle,
        signInSeconds
      }
    }
  } finally {
    await run(Scope.close(scope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
  }
}
