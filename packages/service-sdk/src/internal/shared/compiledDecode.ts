// Copied from packages/shared/src/compiledDecode.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The plain building blocks of both lines' compiled decode passes (`client/decode.ts` of each line, which read their
 * own `effect`'s Schema AST): a pass returns the decoded value, or `FAIL` for an input it rejects (the caller then
 * leaves that input to Effect's own decoder, so every error is Effect's).
 */

/** What a compiled pass returns for an input it rejects. */
export const FAIL: unique symbol = Symbol("FAIL")

/** One compiled pass. */
export type Decode = (input: unknown) => unknown

export const decodeString: Decode = (input) => (typeof input === "string" ? input : FAIL)
export const decodeNumber: Decode = (input) => (typeof input === "number" ? input : FAIL)
export const decodeBoolean: Decode = (input) => (typeof input === "boolean" ? input : FAIL)
export const decodeUndefined: Decode = (input) => (input === undefined ? input : FAIL)
export const decodeAny: Decode = (input) => input

/** Exactly `literal`. */
export const decodeLiteral =
  (literal: unknown): Decode =>
  (input) =>
    input === literal ? input : FAIL

/** An array, each item through `item`, into a new array. */
export const decodeArray =
  (item: Decode): Decode =>
  (input) => {
    if (!Array.isArray(input)) return FAIL
    const output = new Array(input.length)
    for (let index = 0; index < input.length; index++) {
      const value = item(input[index])
      if (value === FAIL) return FAIL
      output[index] = value
    }
    return output
  }

/** The first member that accepts the input. */
export const decodeUnion =
  (members: ReadonlyArray<Decode>): Decode =>
  (input) => {
    for (const member of members) {
      const value = member(input)
      if (value !== FAIL) return value
    }
    return FAIL
  }

/** `compileUncached`, once per node (a node it cannot compile is remembered too). */
export const memoized = <Node extends object>(
  compileUncached: (node: Node) => Decode | undefined
): ((node: Node) => Decode | undefined) => {
  const compiled = new WeakMap<Node, Decode | null>()
  return (node) => {
    const known = compiled.get(node)
    if (known !== undefined) return known ?? undefined
    const decode = compileUncached(node)
    compiled.set(node, decode ?? null)
    return decode
  }
}
