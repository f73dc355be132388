// Copied from packages/shared/src/holds.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The bookkeeping of holds on keyed resources, for both Effect lines (`internal/sharedHold.ts`): per key, the first
 * call takes a hold on a resource, the calls that overlap it join that hold, and when the last one ends the hold stays
 * (idle) until no call has come for the idle time; then it is let go. A call that finds an idle hold joins it: no new
 * hold is taken while a key is in use at least once per idle time. Plain code, no clock of its own: times are
 * milliseconds the caller reads from its clock.
 */

/** A hold on one key's resource, and the calls that use it. */
export interface Held<K, H> {
  readonly key: K
  readonly hold: H
  /** calls under way */
  calls: number
  /** when the last call ended (ms) */
  idleSince: number
  /** an idle timer is running for it */
  timing: boolean
  /** let go of by `drop`: no new call joins it, and the last call to end lets it go */
  dropped: boolean
}

/** What a call's end asks of the caller: nothing, start the idle timer, or let go of the hold now. */
export type Leave = "none" | "startTimer" | "letGo"

/** What the idle timer does when it wakes: sleep this many ms more, let go of the hold now, or end. */
export type Wake = number | "letGo" | "end"

export interface Holds<K, H> {
  /** The hold for `key` (under way or idle), now counting one more call; undefined when there is none. */
  readonly join: (key: K) => Held<K, H> | undefined
  /**
   * A hold just taken for `key`, counting one call: kept (`kept: true`), or, when another call took one meanwhile,
   * that one, counting this call (`kept: false`: let go of the one just taken).
   */
  readonly keep: (key: K, hold: H) => { readonly held: Held<K, H>; readonly kept: boolean }
  /** A call done with `held`, at `now`. */
  readonly leave: (held: Held<K, H>, now: number) => Leave
  /** The idle timer of `held` wakes at `now`; the hold is let go after `idleMillis` without a call. */
  readonly wake: (held: Held<K, H>, now: number, idleMillis: number) => Wake
  /** The hold for `key`, not counting anyone (a call that needs nothing the hold keeps alive). */
  readonly peek: (key: K) => H | undefined
  /** Forget the hold for `key`: its hold when no call is under way (let go of it now), else undefined (the last call does). */
  readonly drop: (key: K) => H | undefined
  /** {@link drop} for every key: the holds to let go of now. */
  readonly dropAll: () => ReadonlyArray<H>
}

export const make = <K, H>(): Holds<K, H> => {
  const held = new Map<K, Held<K, H>>()
  const forget = (key: K, entry: Held<K, H>) => {
    if (held.get(key) === entry) held.delete(key)
    entry.dropped = true
    return entry.calls === 0 ? entry.hold : undefined
  }
  return {
    join: (key) => {
      const entry = held.get(key)
      if (entry === undefined) return undefined
      entry.calls++
      return entry
    },
    keep: (key, hold) => {
      const entry = held.get(key)
      if (entry !== undefined) {
        entry.calls++
        return { held: entry, kept: false }
      }
      const fresh: Held<K, H> = { key, hold, calls: 1, idleSince: 0, timing: false, dropped: false }
      held.set(key, fresh)
      return { held: fresh, kept: true }
    },
    leave: (entry, now) => {
      entry.calls--
      if (entry.calls > 0) return "none"
      if (entry.dropped) return "letGo"
      entry.idleSince = now
      if (entry.timing) return "none"
      entry.timing = true
      return "startTimer"
    },
    wake: (entry, now, idleMillis) => {
      if (entry.dropped || entry.calls > 0) {
        // dropped: let go of elsewhere; in use: the next call to end starts a timer again
        entry.timing = false
        return "end"
      }
      const left = entry.idleSince + idleMillis - now
      if (left > 0) return left
      entry.timing = false
      forget(entry.key, entry)
      return "letGo"
    },
    peek: (key) => held.get(key)?.hold,
    drop: (key) => {
      const entry = held.get(key)
      return entry === undefined ? undefined : forget(key, entry)
    },
    dropAll: () => {
      const now: Array<H> = []
      for (const [key, entry] of [...held]) {
        const hold = forget(key, entry)
        if (hold !== undefined) now.push(hold)
      }
      return now
    }
  }
}
