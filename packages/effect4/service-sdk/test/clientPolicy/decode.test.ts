/** The compiled pass of the SDK's own schemas (`decode.ts`): exactly Effect's results, valid or not. */
import { assert, describe, it } from "@effect/vitest"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { exitDecoder, isCompiled } from "../../src/internal/client/decode.js"
import * as Schemas from "../../src/internal/client/schemas.js"

const SCHEMAS: ReadonlyArray<readonly [string, Schema.Codec<any, any>]> = [
  ["Album", Schemas.Album],
  ["User", Schemas.User],
  ["SavedTracksPage", Schemas.SavedTracksPage],
  ["FollowedArtists", Schemas.FollowedArtists],
  ["PlaybackState or undefined", Schema.UndefinedOr(Schemas.PlaybackState)],
  ["PlaylistSnapshot", Schemas.PlaylistSnapshot]
]

/** An outcome to compare: the value with its keys' order, or Effect's error message. */
const outcome = (exit: Exit.Exit<unknown, Schema.SchemaError>) =>
  Exit.isSuccess(exit) ? { value: JSON.stringify(exit.value) ?? "undefined" } : { error: String(exit.cause) }

const same = (schema: Schema.Codec<any, any>, input: unknown) =>
  assert.deepStrictEqual(outcome(exitDecoder(schema)(input)), outcome(Schema.decodeUnknownExit(schema)(input)))

const album = {
  id: "a1",
  name: "Album",
  extra: { nested: true },
  artists: [{ id: null, name: "Local", uri: null, more: 1 }],
  tracks: { total: 2, items: [{ name: "t", id: "t1", duration_ms: 1, artists: null, track_number: 1 }] },
  release_date: null
}

describe("the compiled decoder (Effect 4)", () => {
  it("takes the compiled pass for every typed resource, and not for a schema with a check", () => {
    for (const [, schema] of SCHEMAS) assert.isTrue(isCompiled(schema))
    assert.isFalse(isCompiled(Schema.Struct({ n: Schema.Int })))
  })

  for (const [name, schema] of SCHEMAS) {
    it.prop(
      `${name}: the same value as Schema.decodeUnknownExit for any valid body`,
      [Schema.toEncoded(schema)],
      ([input]) => same(schema, input)
    )
    it.prop(`${name}: the same outcome for any JSON value`, [Schema.Json], ([input]) => same(schema, input))
  }

  it("the same outcomes for unknown keys, nulls, absent and wrong fields; the input is not changed", () => {
    const copy = structuredClone(album)
    same(Schemas.Album, album)
    assert.deepStrictEqual(album, copy)
    const exit = exitDecoder(Schemas.Album)(album)
    assert.isTrue(Exit.isSuccess(exit))
    const output = Exit.isSuccess(exit) ? exit.value : {}
    assert.deepStrictEqual(Object.keys(output), ["id", "name", "artists", "tracks", "release_date"])
    same(Schemas.Album, { ...album, name: undefined })
    same(Schemas.Album, { ...album, id: 1 })
    const { name: _, ...nameless } = album
    same(Schemas.Album, nameless)
    same(Schemas.Album, { ...album, tracks: { items: [{ id: "t", name: "n" }] } })
    same(Schemas.Album, [album])
    same(Schemas.Album, null)
    same(Schemas.Album, "album")
  })
})
