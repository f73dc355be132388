/**
 * The shared Lua scripts (`shared/redisProtocol.ts`) on an ioredis client: defined once per client, run by name.
 */
import type { Cluster, Redis } from "ioredis"
import { SCRIPTS, type ScriptName } from "@service-sdk/shared/redisProtocol"

export type { ScriptName }

/** A client with the scripts defined: ioredis' `Redis` or `Cluster` (the cache sends nothing but its scripts). */
export type Commands = Redis | Cluster

/** Defines the scripts on a client (once: a borrowed client may serve several caches, of either line). */
export const defineScripts = (client: Redis | Cluster): void => {
  for (const [name, definition] of Object.entries(SCRIPTS)) {
    if (typeof (client as unknown as Record<string, unknown>)[name] !== "function") {
      client.defineCommand(name, definition)
    }
  }
}

/** Runs a script defined by {@link defineScripts}. */
export const script = (
  commands: Commands,
  name: ScriptName,
  key: string,
  ...args: ReadonlyArray<string | number>
): Promise<unknown> =>
  (commands as unknown as Record<ScriptName, (...args: ReadonlyArray<string | number>) => Promise<unknown>>)[name](
    key,
    ...args
  )
