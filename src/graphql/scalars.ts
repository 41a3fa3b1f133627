import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql'
import { AntlerError, formatRfc3339, parseTime } from '../antelope/index.ts'

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const UINT64_MAX = 2n ** 64n - 1n

/** A decimal integer from a number or a string literal/value, within [min, max]; a GraphQLError otherwise. */
function integerInput(scalar: string, value: unknown, min: bigint, max: bigint): bigint {
  let parsed: bigint | undefined
  if (typeof value === 'number' && Number.isSafeInteger(value)) parsed = BigInt(value)
  else if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) parsed = BigInt(value)
  if (parsed === undefined || parsed < min || parsed > max)
    throw new GraphQLError(`${scalar} cannot represent ${JSON.stringify(value)}: an integer from ${min} to ${max}`)
  return parsed
}

function literal(ast: ValueNode): unknown {
  if (ast.kind === Kind.INT) return Number.isSafeInteger(Number(ast.value)) ? Number(ast.value) : ast.value
  if (ast.kind === Kind.STRING) return ast.value
  if (ast.kind === Kind.FLOAT) return Number(ast.value)
  return undefined
}

/**
 * A 64-bit integer: written as a quoted decimal string (a JSON number would lose precision past 2^53), read from a
 * string or a number. Resolvers receive a JS number (every value Antler compares fits 2^53).
 */
function int64Scalar(name: 'Int64' | 'Uint64', min: bigint, max: bigint): GraphQLScalarType {
  return new GraphQLScalarType({
    name,
    description: `${name}: a decimal string on output; a string or a number on input`,
    serialize: (value) => String(value),
    parseValue: (value) => Number(integerInput(name, value, min, max)),
    parseLiteral: (ast) => Number(integerInput(name, literal(ast), min, max)),
  })
}

export const Int64 = int64Scalar('Int64', INT64_MIN, INT64_MAX)
export const Uint64 = int64Scalar('Uint64', 0n, UINT64_MAX)

export const Uint32 = new GraphQLScalarType({
  name: 'Uint32',
  description: 'Uint32: a JSON number on output; a number or a decimal string on input',
  serialize: (value) => Number(value),
  parseValue: (value) => Number(integerInput('Uint32', value, 0n, 0xffff_ffffn)),
  parseLiteral: (ast) => Number(integerInput('Uint32', literal(ast), 0n, 0xffff_ffffn)),
})

/** Any JSON value, embedded as is. */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value, embedded as is',
  serialize: (value) => value,
  parseValue: (value) => value,
})

const MAX_TIME_MS = 8.64e15

/** RFC3339 on output (`2019-01-01T00:00:00.5Z`); RFC3339 text or Unix seconds on input; JS milliseconds inside. */
function timeInput(value: unknown): number {
  // Within what a JS Date holds (±8.64e15 ms).
  if (typeof value === 'number' && Number.isFinite(value) && Math.abs(value * 1000) <= MAX_TIME_MS) return value * 1000
  if (typeof value === 'string') {
    try {
      return parseTime(value)
    } catch (error) {
      if (error instanceof AntlerError) throw new GraphQLError(`Time cannot represent ${JSON.stringify(value)}`)
      throw error
    }
  }
  throw new GraphQLError(`Time cannot represent ${JSON.stringify(value)}: expected RFC3339 text or Unix seconds`)
}

export const Time = new GraphQLScalarType({
  name: 'Time',
  description: 'RFC3339 time, UTC (`2019-01-01T00:00:00Z`); Unix seconds accepted on input',
  serialize: (value) => formatRfc3339(Number(value)),
  parseValue: timeInput,
  parseLiteral: (ast) => timeInput(literal(ast)),
})
