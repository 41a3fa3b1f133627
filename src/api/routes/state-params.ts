import { Type } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import {
  AntlerError,
  bigIntToName,
  canonicalPublicKey,
  isValidName,
  KEY_TYPES,
  parseKey,
  type KeyType,
} from '../../antelope/index.ts'
import type { RowFormat } from '../../state/index.ts'
import { RequestValidationError } from '../errors.ts'

/** The most names one `scopes` or `accounts` list may hold (the spec's limit). */
export const MAX_NAMES = 1500

const invalid = (param: string, sentence: string) => RequestValidationError({ errors: { [param]: [sentence] } })

/** Query-string schemas of the state parameters; names are checked as chain names in the handlers. */
export const P = {
  name: Type.String({ maxLength: 13 }),
  /** A scope: a name, `CODE` or `P,CODE` (as dfuse accepted); may be empty. */
  scope: Type.String({ maxLength: 20 }),
  blockNum: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 0xffff_ffff, description: 'absent or 0: head (LIB with irreversible_only)' }),
  ),
  /** dfuse's booleans: true only for `true` or `1`. */
  bool: Type.Optional(Type.String({ maxLength: 5 })),
  /** An enum, not a union of literals: one sentence when it fails, not one per value. */
  keyType: Type.Optional(Type.Enum([...KEY_TYPES], { description: 'how row keys are rendered (default name)' })),
  /** A pipe-separated list of names. */
  names: Type.String({ minLength: 1, maxLength: MAX_NAMES * 21 }),
}

export const isTrue = (value: string | undefined): boolean => value === 'true' || value === '1'

/** An account, table or other plain name parameter, in canonical form; empty is absent (dfuse's `required`). */
export function nameParam(param: string, value: string): string {
  if (value === '') throw invalid(param, `The ${param} field is required.`)
  if (!isValidName(value)) throw invalid(param, `The ${param} field must be a valid EOS name`)
  return value
}

/** One account of a pipe-separated list: an empty entry (`a||b`, a trailing `|`) names no account. */
export function listedNameParam(param: string, value: string): string {
  if (value === '') throw invalid(param, `The ${param} field must not hold an empty name`)
  return nameParam(param, value)
}

/**
 * `block_num` in decimal digits only. The schema's integer check runs after Ajv's type coercion,
 * which reads `1e3`, `0x10`, `1.0` and ` ` as integers; dfuse parsed the parameter as a decimal
 * uint32. Values of other types (repeated parameters, JSON numbers) are left to the schema.
 */
export function checkBlockNum(params: unknown): void {
  const raw = typeof params === 'object' && params !== null ? (params as { block_num?: unknown }).block_num : undefined
  if (typeof raw === 'string' && !/^[0-9]+$/.test(raw))
    throw invalid('block_num', 'The block_num field must be a block number in decimal digits')
}

/** A scope (name, `CODE` or `P,CODE`, or empty) as the name string the store keys scopes by. */
export function scopeParam(param: string, value: string): string {
  try {
    return bigIntToName(parseKey(value, 'name'))
  } catch (error) {
    if (error instanceof AntlerError)
      throw invalid(param, `The ${param} field must be a valid EOS name, symbol code or symbol`)
    throw error
  }
}

/** A pipe-separated list of at most MAX_NAMES scopes or accounts. */
export function nameListParam(param: string, value: string, each: (param: string, value: string) => string): string[] {
  const names = value.split('|')
  if (names.length > MAX_NAMES)
    throw invalid(param, `The ${param} field holds ${names.length} names; at most ${MAX_NAMES}`)
  return names.map((n) => each(param, n))
}

/** A primary key written in `keyType`. */
export function primaryKeyParam(value: string, keyType: KeyType): bigint {
  if (value === '') throw invalid('primary_key', 'The primary_key field is required.')
  try {
    return parseKey(value, keyType)
  } catch (error) {
    if (error instanceof AntlerError)
      throw invalid('primary_key', `The primary_key field must be a valid ${keyType} key: ${error.message}`)
    throw error
  }
}

/** A public key in any client form, as the store keeps it. */
export function publicKeyParam(value: string): string {
  const key = canonicalPublicKey(value)
  if (key === undefined) throw invalid('public_key', 'The public_key field must be a valid public key')
  return key
}

/** `json`, `key_type` and `with_block_num` as a row format. */
export function rowFormat(query: { json?: string; key_type?: KeyType; with_block_num?: string }): RowFormat {
  return { json: isTrue(query.json), keyType: query.key_type ?? 'name', withBlockNum: isTrue(query.with_block_num) }
}

/** A multi-table answer, its rows counted as the documents it serves (per-key usage). */
export function servedRows<Answer extends { tables: readonly { rows: readonly unknown[] }[] }>(
  request: FastifyRequest,
  answer: Answer,
): Answer {
  request.documents = answer.tables.reduce((sum, table) => sum + table.rows.length, 0)
  return answer
}
