/**
 * The bookkeeping of holds shared by overlapping calls, for both Effect lines (`internal/sharedHold.ts`): per key, the
 * first call takes a hold on a resource, the calls that overlap it join that hold, and the last to end lets it go.
 */

interface Counted<H> {
  readonly hold: H
  calls: number
}

export interface Holds<K, H> {
  /** The hold under way for `key`, now counting one more call; undefined when there is none (take one, then `keep`). */
  readonly join: (key: K) => H | undefined
  /**
   * A hold just taken for `key`: kept (`kept: true`), or, when another call took one meanwhile, that one, counting
   * this call (`kept: false`: let go of the one just taken).
   */
  readonly keep: (key: K, hold: H) => { readonly hold: H; readonly kept: boolean }
  /** A call done with `hold`: true when it was the last one (let go of the hold). */
  readonly leave: (key: K, hold: H) => boolean
  /** The hold under way for `key`, not counting anyone (a call that needs nothing the hold keeps alive). */
  readonly peek: (key: K) => H | undefined
}

export const make = <K, H>(): Holds<K, H> => {
  const held = new Map<K, Counted<H>>()
  return {
    join: (key) => {
      const counted = held.get(key)
      if (counted === undefined) return undefined
      counted.calls++
      return counted.hold
    },
    keep: (key, hold) => {
      const counted = held.get(key)
      if (counted !== undefined) {
        counted.calls++
        return { hold: counted.hold, kept: false }
      }
      held.set(key, { hold, calls: 1 })
      return { hold, kept: true }
    },
    leave: (key, hold) => {
      const counted = held.get(key)
      if (counted === undefined || counted.hold !== hold) return true
      counted.calls--
      if (counted.calls > 0) return false
      held.delete(key)
      return true
    },
    peek: (key) => held.get(key)?.hold
  }
}
