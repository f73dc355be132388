/**
 * One Redis protocol for both lines: the Lua scripts the Effect 4 line defines are the Effect 3 line's, text for text
 * (so both send the same SHA1s and behave alike on one Redis), and the keys are derived alike.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/redis"
import { SCRIPTS } from "@service-sdk/shared/redisProtocol"

const effect3Connection = join(import.meta.dirname, "..", "..", "..", "redis", "src", "internal", "connection.ts")

it("the Effect 3 line defines the same scripts: both import the one shared protocol module", () => {
  // packages/shared/src/redisProtocol.ts, copied into each package (scripts/shared.mjs; the copies are checked equal)
  expect(readFileSync(effect3Connection, "utf8")).toContain('from "./shared/redisProtocol.js"')
  expect(Object.keys(SCRIPTS).length).toBeGreaterThan(0)
})

it("every script touches one key (Redis Cluster needs no hash tags) and leaves a neighbour's value alone", () => {
  for (const [name, script] of Object.entries(SCRIPTS)) {
    expect(script.numberOfKeys, name).toBe(1)
    expect(script.lua, name).not.toMatch(/KEYS\[2\]/)
    // each reads the key's type first: another application's value is answered, never touched
    expect(script.lua, name).toMatch(/redis\.call\("type", key\)/)
  }
})

it("the keys are the Effect 3 line's: `<key>:lock`, and `<prefix><encoded user id>`", () => {
  expect(RedisTokenCache.lockKey("service-sdk:token:app")).toBe("service-sdk:token:app:lock")
  expect(RedisTokenStore.userKey("app:", "ü/../x")).toBe("app:%00fc%002f..%002fx")
  expect(RedisTokenStore.userKey("app:", "user@example.com")).toBe("app:user@example.com")
})
