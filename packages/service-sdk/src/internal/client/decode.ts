/**
 * Decoding the API's JSON through a Schema, faster with identical results. `Schema.decodeUnknown` re-validates the
 * decoded side of every `Struct` that has `optionalWith` fields (each is a transformation, and Effect parses its
 * `to` side again), at every nesting level. For the plain shapes of the data API (structs, arrays, nullable
 * unions, keywords, literals, and `Struct` property transformations) this compiles the schema's AST once into one
 * pass that validates the encoded side and applies the schema's own property transformations. Anything it does
 * not know (refinements, declarations, suspensions, other transformations) leaves the whole schema to
 * `Schema.decodeUnknown`; so does any body that fails the fast pass, so errors are exactly Effect's own.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import {
  type Decode,
  decodeAny,
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

const hasOwn = Object.prototype.hasOwnProperty

const isRecord = (input: unknown): input is Record<PropertyKey, unknown> =>
  typeof input === "object" && input !== null && !Array.isArray(input)

type Step = (o: Option.Option<unknown>) => Option.Option<unknown>

/**
 * A struct, in one pass: each property validated (as Effect, not `exact`: a missing required key is parsed as
 * `undefined`), then, when `steps` has one for it, its property transformation applied (what Effect's
 * `TypeLiteralTransformation` does after building the object, without deleting and re-adding keys).
 */
const compileTypeLiteral = (
  ast: AST.TypeLiteral,
  steps: ReadonlyMap<PropertyKey, Step> = new Map()
): Decode | undefined => {
  if (ast.indexSignatures.length > 0) return undefined
  // parallel arrays walked by index: no tuple per field, no iterator per object
  const names: Array<PropertyKey> = []
  const decoders: Array<Decode> = []
  const optionals: Array<boolean> = []
  const transforms: Array<Step | undefined> = []
  for (const ps of ast.propertySignatures) {
    const decode = compile(ps.type)
    if (decode === undefined) return undefined
    names.push(ps.name)
    decoders.push(decode)
    optionals.push(ps.isOptional)
    transforms.push(steps.get(ps.name))
  }
  const count = names.length
  return (input) => {
    if (!isRecord(input)) return FAIL
    const output: Record<PropertyKey, unknown> = {}
    for (let index = 0; index < count; index++) {
      const name = names[index]!
      const present = !optionals[index] || hasOwn.call(input, name)
      let value: unknown
      if (present) {
        value = decoders[index]!(input[name])
        if (value === FAIL) return FAIL
      }
      const step = transforms[index]
      if (step === undefined) {
        if (present) output[name] = value
        continue
      }
      const next = step(present ? Option.some(value) : Option.none())
      if (Option.isSome(next)) output[name] = next.value
    }
    return output
  }
}

const compileTransformation = (ast: AST.Transformation): Decode | undefined => {
  if (ast.transformation._tag !== "TypeLiteralTransformation") return undefined
  // The `to` side is checked to be one we understand; it is not run again (its values are decoded already).
  if (compile(ast.to) === undefined) return undefined
  const steps = ast.transformation.propertySignatureTransformations
  // The usual shape (`optionalWith` fields of a `Struct`): steps that keep their key, on a plain struct.
  const from0 = ast.from
  if (
    from0._tag === "TypeLiteral" &&
    steps.every((step) => step.from === step.to && from0.propertySignatures.some((ps) => ps.name === step.from))
  ) {
    return compileTypeLiteral(from0, new Map(steps.map((step) => [step.from, step.decode])))
  }
  const from = compile(ast.from)
  if (from === undefined) return undefined
  return (input) => {
    const output = from(input)
    if (output === FAIL) return FAIL
    const record = output as Record<PropertyKey, unknown>
    for (const step of steps) {
      const next = step.decode(hasOwn.call(record, step.from) ? Option.some(record[step.from]) : Option.none())
      delete record[step.from]
      if (Option.isSome(next)) record[step.to] = next.value
    }
    return record
  }
}

const compileUncached = (ast: AST.AST): Decode | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return decodeString
    case "NumberKeyword":
      return decodeNumber
    case "BooleanKeyword":
      return decodeBoolean
    case "UndefinedKeyword":
      return decodeUndefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return decodeAny
    case "Literal":
      return decodeLiteral(ast.literal)
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
      const item = compile(ast.rest[0]!.type)
      return item === undefined ? undefined : decodeArray(item)
    }
    case "TypeLiteral":
      return compileTypeLiteral(ast)
    case "Union": {
      const members: Array<Decode> = []
      for (const member of ast.types) {
        const decode = compile(member)
        if (decode === undefined) return undefined
        members.push(decode)
      }
      return decodeUnion(members)
    }
    case "Transformation":
      return compileTransformation(ast)
    default:
      return undefined
  }
}

const compile = memoized(compileUncached)

type Slow = (input: unknown) => Effect.Effect<unknown, ParseResult.ParseError>

/** A schema's decoding: Effect's own, and the compiled pass when the schema has a shape it knows. */
interface Decoding {
  readonly slow: Slow
  readonly fast: Decode | undefined
}

const decodings = new WeakMap<object, Decoding>()

const decodingOf = (schema: Schema.Schema.Any): Decoding => {
  let known = decodings.get(schema)
  if (known === undefined) {
    known = {
      slow: Schema.decodeUnknown(schema as Schema.Schema<unknown, unknown>, { errors: "all" }),
      fast: compile(schema.ast)
    }
    decodings.set(schema, known)
  }
  return known
}

/**
 * `Schema.decodeUnknown(schema, { errors: "all" })(input)`, with the same results, its ParseError mapped by
 * `onError`: through the compiled pass when the schema has a shape it knows, and a value that pass accepts is returned
 * as is (no mapping step on the way of every answer).
 */
export const decodeOr = <A, I, E>(
  schema: Schema.Schema<A, I>,
  input: unknown,
  onError: (error: ParseResult.ParseError) => E
): Effect.Effect<A, E> => {
  const { fast, slow } = decodingOf(schema)
  if (fast !== undefined) {
    const value = fast(input)
    if (value !== FAIL) return Effect.succeed(value as A)
  }
  return Effect.mapError(slow(input) as Effect.Effect<A, ParseResult.ParseError>, onError)
}

/** Whether `schema` takes the compiled pass (for tests). */
export const isCompiled = (schema: Schema.Schema.Any): boolean => compile(schema.ast) !== undefined
