/**
 * Decoding the API's JSON through the SDK's own schemas, faster with identical results. Effect's decoder walks
 * every value through its parser machinery (an `Exit` per value, candidate tables for unions): for the 6 KB album
 * it costs as much as `JSON.parse`. The data API's schemas are plain (structs without index signatures, arrays,
 * unions, keywords, literals; no checks, no encodings): this compiles such a schema's AST once into one pass with
 * Effect's own rules for them (a key is present when `key in input`, an optional key may be missing, a required
 * one may not, unknown keys are dropped, keys come out in the schema's order, union members are tried in order).
 * Anything else (checks, encodings, declarations, suspensions, index signatures, `oneOf` unions, a `__proto__` key)
 * leaves the whole schema to Effect; so does any value the pass rejects, so every error is exactly Effect's own.
 * (The Effect 3 line's `decode.ts` is the same idea on Effect 3's AST.)
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import {
  type Decode,
  decodeArray,
  decodeBoolean,
  decodeLiteral,
  decodeNumber,
  decodeString,
  decodeUndefined,
  decodeUnion,
  FAIL,
  memoized
} from "@service-sdk/shared/compiledDecode"

const compileObjects = (ast: SchemaAST.Objects): Decode | undefined => {
  if (ast.indexSignatures.length > 0 || ast.encodingChecks !== undefined || ast.propertySignatures.length === 0) {
    return undefined
  }
  const names: Array<string> = []
  const decoders: Array<Decode> = []
  const optionals: Array<boolean> = []
  for (const ps of ast.propertySignatures) {
    const decode = compile(ps.type)
    if (decode === undefined || typeof ps.name !== "string" || ps.name === "__proto__") return undefined
    names.push(ps.name)
    decoders.push(decode)
    optionals.push(SchemaAST.isOptional(ps.type))
  }
  const count = names.length
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return FAIL
    const record = input as Record<string, unknown>
    const output: Record<string, unknown> = {}
    for (let index = 0; index < count; index++) {
      const name = names[index]!
      if (name in record) {
        const value = decoders[index]!(record[name])
        if (value === FAIL) return FAIL
        output[name] = value
      } else if (!optionals[index]) {
        return FAIL
      }
    }
    return output
  }
}

const decodeNull: Decode = (input) => (input === null ? input : FAIL)

const compileUncached = (ast: SchemaAST.AST): Decode | undefined => {
  if (ast.checks !== undefined || ast.encoding !== undefined) return undefined
  switch (ast._tag) {
    case "String":
      return decodeString
    case "Number":
      return decodeNumber
    case "Boolean":
      return decodeBoolean
    case "Null":
      return decodeNull
    case "Undefined":
      return decodeUndefined
    case "Literal":
      return decodeLiteral(ast.literal)
    case "Arrays": {
      if (ast.elements.length > 0 || ast.rest.length !== 1 || ast.encodingChecks !== undefined) return undefined
      const item = compile(ast.rest[0]!)
      return item === undefined ? undefined : decodeArray(item)
    }
    case "Objects":
      return compileObjects(ast)
    case "Union": {
      if (ast.options?.mode === "oneOf" || ast.encodingChecks !== undefined) return undefined
      const members: Array<Decode> = []
      for (const member of ast.types) {
        const decode = compile(member)
        if (decode === undefined) return undefined
        members.push(decode)
      }
      return decodeUnion(members)
    }
    default:
      return undefined
  }
}

const compile = memoized(compileUncached)

/**
 * `Schema.decodeUnknownExit(schema)` with the same results, through the compiled pass when the schema has a shape it
 * knows. For schemas that decode synchronously (the SDK's own).
 */
export const exitDecoder = <A>(
  schema: Schema.Codec<A, any>
): ((input: unknown) => Exit.Exit<A, Schema.SchemaError>) => {
  const slow = Schema.decodeUnknownExit(schema) as (input: unknown) => Exit.Exit<A, Schema.SchemaError>
  const fast = compile(schema.ast)
  if (fast === undefined) return slow
  return (input) => {
    const value = fast(input)
    return value === FAIL ? slow(input) : Exit.succeed(value as A)
  }
}

/** Whether `schema` takes the compiled pass (for tests). */
export const isCompiled = (schema: Schema.Top): boolean => compile(schema.ast) !== undefined
