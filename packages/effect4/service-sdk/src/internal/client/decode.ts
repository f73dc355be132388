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

/** What a compiled pass returns for an input it rejects. */
const FAIL: unique symbol = Symbol("FAIL")
type Decode = (input: unknown) => unknown

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

const compileUncached = (ast: SchemaAST.AST): Decode | undefined => {
  if (ast.checks !== undefined || ast.encoding !== undefined) return undefined
  switch (ast._tag) {
    case "String":
      return (input) => (typeof input === "string" ? input : FAIL)
    case "Number":
      return (input) => (typeof input === "number" ? input : FAIL)
    case "Boolean":
      return (input) => (typeof input === "boolean" ? input : FAIL)
    case "Null":
      return (input) => (input === null ? input : FAIL)
    case "Undefined":
      return (input) => (input === undefined ? input : FAIL)
    case "Literal": {
      const literal = ast.literal
      return (input) => (input === literal ? input : FAIL)
    }
    case "Arrays": {
      if (ast.elements.length > 0 || ast.rest.length !== 1 || ast.encodingChecks !== undefined) return undefined
      const item = compile(ast.rest[0]!)
      if (item === undefined) return undefined
      return (input) => {
        if (!Array.isArray(input)) return FAIL
        const output = new Array(input.length)
        for (let index = 0; index < input.length; index++) {
          const value = item(input[index])
          if (value === FAIL) return FAIL
          output[index] = value
        }
        return output
      }
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
      return (input) => {
        for (const member of members) {
          const value = member(input)
          if (value !== FAIL) return value
        }
        return FAIL
      }
    }
    default:
      return undefined
  }
}

const compiled = new WeakMap<SchemaAST.AST, Decode | null>()

const compile = (ast: SchemaAST.AST): Decode | undefined => {
  const known = compiled.get(ast)
  if (known !== undefined) return known ?? undefined
  const decode = compileUncached(ast)
  compiled.set(ast, decode ?? null)
  return decode
}

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
