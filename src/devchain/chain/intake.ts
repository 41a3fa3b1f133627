import { inflateSync } from 'node:zlib'
import { Serializer, Signature, Transaction } from '@wharfkit/antelope'
import {
  fromHex,
  isValidName,
  packContextFreeData,
  signingDigest,
  transactionId,
  type RawAction,
} from '../../antelope/index.ts'
import { chainErrors } from '../errors.ts'
import type { TransactionHeaderFields } from './traces.ts'

/** A transaction as it travels: packed, with its signatures (the `packed_transaction` JSON of nodeos). */
export interface PackedTransactionInput {
  readonly signatures: readonly string[]
  readonly compression: 0 | 1
  readonly packedContextFreeData: Uint8Array
  readonly packedTrx: Uint8Array
}

/** A decoded transaction with what validation needs. */
export interface DecodedTransaction extends TransactionHeaderFields {
  readonly id: string
  readonly input: PackedTransactionInput
  /** The inflated packed transaction (what the id and signatures cover). */
  readonly packedTrx: Uint8Array
  readonly contextFreeActions: readonly RawAction[]
  readonly actions: readonly RawAction[]
  readonly contextFreeData: readonly Uint8Array[]
}

export const MAX_TRANSACTION_BYTES = 512 * 1024
const MAX_SIGNATURES = 64

/** Reads nodeos's `packed_transaction` JSON (compression as a number or `none`/`zlib`). */
export function packedInputFromJson(body: unknown): PackedTransactionInput {
  if (typeof body !== 'object' || body === null)
    throw chainErrors.packedTransactionType('expected a packed transaction object')
  const b = body as Record<string, unknown>
  const hex = (v: unknown, field: string, optional = false): Uint8Array => {
    if ((v === undefined || v === null || v === '') && optional) return new Uint8Array(0)
    if (typeof v !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(v))
      throw chainErrors.packedTransactionType(`${field} must be hex`)
    return fromHex(v)
  }
  const signatures = b.signatures ?? []
  if (!Array.isArray(signatures) || !signatures.every((s) => typeof s === 'string'))
    throw chainErrors.packedTransactionType('signatures must be an array of strings')
  if (signatures.length > MAX_SIGNATURES)
    throw chainErrors.packedTransactionType(`more than ${MAX_SIGNATURES} signatures`)
  const c = b.compression ?? 0
  const compression = c === 0 || c === 'none' ? 0 : c === 1 || c === 'zlib' ? 1 : undefined
  if (compression === undefined) throw chainErrors.packedTransactionType(`unknown compression ${JSON.stringify(c)}`)
  return {
    signatures: signatures as string[],
    compression,
    packedContextFreeData: hex(b.packed_context_free_data, 'packed_context_free_data', true),
    packedTrx: hex(b.packed_trx, 'packed_trx'),
  }
}

function toRawAction(a: {
  account: { toString(): string }
  name: { toString(): string }
  authorization: { actor: { toString(): string }; permission: { toString(): string } }[]
  data: { array: Uint8Array }
}): RawAction {
  return {
    account: a.account.toString(),
    name: a.name.toString(),
    authorization: a.authorization.map((l) => ({ actor: l.actor.toString(), permission: l.permission.toString() })),
    data: a.data.array,
  }
}

function decodeContextFreeData(bytes: Uint8Array): Uint8Array[] {
  if (bytes.length === 0) return []
  try {
    return (Serializer.decode({ data: bytes, type: 'bytes[]' }) as { array: Uint8Array }[]).map((b) => b.array)
  } catch {
    throw chainErrors.packedTransactionType('packed_context_free_data does not unpack')
  }
}

function unpack(compression: number, bytes: Uint8Array, what: string): Uint8Array {
  if (compression === 0) return bytes
  if (compression !== 1) throw chainErrors.packedTransactionType(`unknown compression ${compression}`)
  try {
    const out = inflateSync(bytes, { maxOutputLength: MAX_TRANSACTION_BYTES })
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  } catch {
    throw chainErrors.packedTransactionType(`unable to decompress ${what}`)
  }
}

/** A stored or pushed `packed_transaction`: compression 0 (none) or 1 (zlib) and its bytes as sent. */
export type PackedBytes = Pick<PackedTransactionInput, 'packedTrx' | 'packedContextFreeData'> & {
  readonly compression: number
}

/**
 * The serialized `transaction` of a packed one (inflated when zlib): what is decoded, signed and hashed into the id.
 */
export function unpackedTrx(packed: Pick<PackedBytes, 'compression' | 'packedTrx'>): Uint8Array {
  return unpack(packed.compression, packed.packedTrx, 'packed_trx')
}

/** The context-free data of a packed transaction, inflated when zlib and split into its entries. */
export function unpackedContextFreeData(
  packed: Pick<PackedBytes, 'compression' | 'packedContextFreeData'>,
): Uint8Array[] {
  if (packed.packedContextFreeData.length === 0) return []
  return decodeContextFreeData(unpack(packed.compression, packed.packedContextFreeData, 'packed_context_free_data'))
}

/** Decodes a packed transaction; throws nodeos-style errors for anything malformed. */
export function decodeTransaction(input: PackedTransactionInput): DecodedTransaction {
  if (input.packedTrx.length + input.packedContextFreeData.length > MAX_TRANSACTION_BYTES) {
    throw chainErrors.txTooBig(`transaction is larger than ${MAX_TRANSACTION_BYTES} bytes`)
  }
  const packedTrx = unpackedTrx(input)
  let trx: Transaction
  try {
    trx = Serializer.decode({ data: packedTrx, type: Transaction })
  } catch (error) {
    throw chainErrors.packedTransactionType(`packed_trx does not unpack: ${(error as Error).message}`)
  }
  // wharfkit ignores trailing bytes; nodeos does not.
  if (Serializer.encode({ object: trx }).array.length !== packedTrx.length)
    throw chainErrors.packedTransactionType('packed_trx has trailing bytes')
  const actions = trx.actions.map(toRawAction)
  const contextFreeActions = trx.context_free_actions.map(toRawAction)
  for (const a of [...actions, ...contextFreeActions]) {
    for (const n of [a.account, a.name, ...a.authorization.flatMap((l) => [l.actor, l.permission])]) {
      if (!isValidName(n)) throw chainErrors.nameType(`invalid name ${JSON.stringify(n)}`)
    }
  }
  return {
    id: transactionId(packedTrx),
    input,
    packedTrx,
    expirationSec: trx.expiration.value.toNumber(),
    refBlockNum: trx.ref_block_num.toNumber(),
    refBlockPrefix: trx.ref_block_prefix.toNumber(),
    maxNetUsageWords: trx.max_net_usage_words.toNumber(),
    maxCpuUsageMs: trx.max_cpu_usage_ms.toNumber(),
    delaySec: trx.delay_sec.toNumber(),
    contextFreeActions,
    actions,
    contextFreeData: unpackedContextFreeData(input),
  }
}

/** The public keys (`PUB_K1_…`) that signed the transaction; refuses malformed and duplicate signatures. */
export function recoverSigningKeys(chainId: string, trx: DecodedTransaction): Set<string> {
  // nodeos hashes the context-free data only when the unpacked list is non-empty (bytes may be `00` or a zlib frame).
  const digest = signingDigest(chainId, trx.packedTrx, packContextFreeData(trx.contextFreeData))
  const keys = new Set<string>()
  for (const text of trx.input.signatures) {
    let key: string
    try {
      key = Signature.from(text).recoverDigest(digest).toString()
    } catch (error) {
      throw chainErrors.signatureType(`invalid signature ${JSON.stringify(text)}: ${(error as Error).message}`)
    }
    if (keys.has(key)) throw chainErrors.txDuplicateSig(`duplicate signature for key ${key}`)
    keys.add(key)
  }
  return keys
}

/** Net usage nodeos bills: the packed transaction plus its signatures and a fixed overhead, in 8-byte words. */
export function netUsageWords(trx: DecodedTransaction): number {
  return Math.ceil(
    (trx.input.packedTrx.length + trx.input.packedContextFreeData.length + 66 * trx.input.signatures.length + 16) / 8,
  )
}
