import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Either, FastCheck as fc, Schema } from "effect"
import { decodeOr, isCompiled } from "../../src/internal/client/decode.js"

/** The compiled decode with Effect's own error (`decodeOr` without a mapping). */
const decoder =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (input: unknown) =>
    decodeOr(schema, input, (error) => error)
import * as SchemaModule from "../../src/internal/client/schemas.js"

const Schemas = SchemaModule.schemas()

const SCHEMAS: ReadonlyArray<readonly [string, Schema.Schema<any, any>]> = [
  ["Album", Schemas.Album],
  ["User", Schemas.User],
  ["SavedTracksPage", Schemas.SavedTracksPage],
  ["FollowedArtists", Schemas.FollowedArtists],
  ["PlaybackState or undefined", Schema.UndefinedOr(Schemas.PlaybackState)],
  ["PlaylistSnapshot", Schemas.PlaylistSnapshot]
]

/** `value` with the node number `target` (depth-first) replaced by `replacement`, and extra keys kept. */
const mutate = (value: unknown, target: number, replacement: unknown): unknown => {
  let seen = 0
  const go = (node: unknown): unknown => {
    if (seen++ === target) return replacement
    if (Array.isArray(node)) return node.map(go)
    if (typeof node === "object" && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, go(item)]))
    }
    return node
  }
  return go(value)
}

const outcome = (effect: Effect.Effect<unknown, { readonly message: string }>) =>
  Either.mapLeft(Effect.runSync(Effect.either(effect)), (error) => error.message)

describe("the compiled decoder", () => {
  it("takes the compiled pass for every typed resource, and not for a schema with a refinement", () => {
    for (const [, schema] of SCHEMAS) expect(isCompiled(schema)).toBe(true)
    expect(isCompiled(Schema.Struct({ n: Schema.Int }))).toBe(false)
  })

  for (const [name, schema] of SCHEMAS) {
    const valid = Arbitrary.make(Schema.encodedSchema(schema))
    const body = fc.oneof(
      valid,
      // valid bodies with unknown fields
      fc
        .tuple(valid, fc.dictionary(fc.string(), fc.jsonValue()))
        .map(([value, extra]) =>
          typeof value === "object" && value !== null && !Array.isArray(value) ? { ...extra, ...value } : value
        ),
      // one node replaced by any JSON value (mostly invalid bodies)
      fc
        .tuple(valid, fc.nat({ max: 40 }), fc.oneof(fc.jsonValue(), fc.constant(undefined)))
        .map(([value, target, replacement]) => mutate(value, target, replacement)),
      fc.jsonValue()
    )
    it.prop(
      `${name}: the same result as Schema.decodeUnknown`,
      [body],
      ([input]) => {
        const expected = outcome(Schema.decodeUnknown(schema, { errors: "all" })(input))
        expect(outcome(decoder(schema)(input))).toStrictEqual(expected)
      },
      { fastCheck: { numRuns: 400 } }
    )
  }

  it("builds new objects: the input is never changed, unknown fields are dropped", () => {
    const input = { id: "a", name: "n", artists: [], tracks: { items: [], total: null, extra: 1 }, uri: null }
    const copy = structuredClone(input)
    const output = Effect.runSync(decoder(Schemas.Album)(input))
    expect(input).toStrictEqual(copy)
    expect(output).toStrictEqual({ id: "a", name: "n", artists: [], tracks: { items: [] } })
  })
})
