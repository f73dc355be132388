/**
 * The settling after a promotion, for a user whose lock this process never took before (issue 44), written once for
 * both lines' suites: each line passes its store's operations as Promises. A process that had served a user only
 * from the shared entry, never under its lock, took that lock first after a Sentinel failover: with nothing to
 * compare the server's replication id with, it did not settle, renewed from the rolled-back entry, and presented a
 * refresh token another process's kept write was about to replace.
 */
import { randomUUID } from "node:crypto"
import { type Node, sleep, waitFor } from "./topology.js"

/** One line's store under a prefix: a user's `withLock` (resolving when the locked work ran) and a plain read. */
export interface StoreOperations {
  readonly lock: (userId: string) => Promise<void>
  readonly read: (userId: string) => Promise<boolean>
}

const field = async (node: Node, name: string) =>
  String(await node.admin.info("replication")).match(new RegExp(`${name}:(\\w+)`))?.[1] ?? ""

/** Two coordinated failovers (Redis 6.2+): the same server is master again, with a new replication id. */
const promote = async (pair: { readonly master: Node; readonly replica: Node }) => {
  const before = await field(pair.master, "master_replid")
  for (const [from, to] of [
    [pair.master, pair.replica],
    [pair.replica, pair.master]
  ] as const) {
    await from.admin.call("FAILOVER")
    await waitFor(
      "a coordinated failover",
      async () => (await field(to, "role")) === "master" && (await field(from, "role")) === "slave",
      10_000
    )
  }
  await waitFor(
    "the master taking writes",
    async () => (await pair.master.admin.set(`promotion:probe:${randomUUID()}`, "x")) === "OK",
    10_000
  )
  if ((await field(pair.master, "master_replid")) === before) throw new Error("the replication id did not change")
}

/** Closes the store's connection (not the test's own) and waits until it reads again, then 2.5 s more. */
const away = async (master: Node, store: StoreOperations, userId: string) => {
  await master.admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
  await waitFor("the store reconnecting", () => store.read(userId), 10_000)
  // past the 2 s that a holder waits from the connection's `close` alone
  await sleep(2500)
}

const lockWait = async (store: StoreOperations, userId: string) => {
  const start = Date.now()
  await store.lock(userId)
  return Date.now() - start
}

/**
 * After the connection was away: a user's first lock does not wait when the server is the one it knew, and waits the
 * settling (2 s) when the server has a replication id the connection first met after it came back. Resolves with
 * the two waits (ms), for each line's test to check (< 1500: no settle; >= 1500: the 2 s settle).
 */
export const firstLockAfterPromotion = async (
  pair: { readonly master: Node; readonly replica: Node },
  store: StoreOperations
): Promise<{ readonly sameServer: number; readonly promoted: number }> => {
  // a first lock records the server's replication id
  await store.lock("known")
  await away(pair.master, store, "known")
  const sameServer = await lockWait(store, "first-after-reconnect")
  await promote(pair)
  await away(pair.master, store, "known")
  return { sameServer, promoted: await lockWait(store, "first-after-promotion") }
}
