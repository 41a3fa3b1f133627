import { BinaryWriter, fromHex, nameToBigInt, packContextFreeData, toHex, transactionId } from '../antelope/index.ts'
import type { LifecycleService, TransactionLifecycle } from '../lifecycle/index.ts'
import type { WireActionTrace, WireSignedTransaction } from '../lifecycle/index.ts'
import { uint64 } from './v1-action-trace.ts'

/**
 * `POST /v1/history/get_transaction` in nodeos's history_plugin shape, from the transaction lifecycle dfuse's
 * `/v0/transactions/:id` answers (one assembly of the signed transaction and its traces): the real transaction, where
 * Hyperion answers zeros and empty strings. A transaction the store has no execution of (unknown, only delayed,
 * canceled, expired, or its block forked out) is nodeos's `tx_not_found`.
 */

export interface V1GetTransactionRequest {
  readonly id: string
  /** Accepted and unused: the store finds a transaction by its id alone. */
  readonly block_num_hint?: number
  /** false: no `traces` (what wharfkit sends for `excludeTraces`). */
  readonly traces?: boolean
}

/** nodeos's error body for an unknown transaction (answered with HTTP 404: eosjs and wharfkit then throw as usual). */
export interface V1TransactionNotFound {
  readonly code: 404
  readonly message: string
  readonly error: {
    readonly code: 3040011
    readonly name: 'tx_not_found'
    readonly what: string
    readonly details: readonly { message: string; file: string; line_number: number; method: string }[]
  }
}

export function v1TransactionNotFound(id: string): V1TransactionNotFound {
  return {
    code: 404,
    message: 'Not Found',
    error: {
      code: 3040011,
      name: 'tx_not_found',
      what: 'The transaction can not be found',
      details: [
        {
          message: `Transaction ${id} not found in history and no block hint was given`,
          file: '',
          line_number: 1,
          method: 'get_transaction',
        },
      ],
    },
  }
}

/** The wire transaction packed again (uncompressed); undefined when its id is not `id` (a record missing a part). */
export function repackTransaction(trx: WireSignedTransaction, id: string): Uint8Array | undefined {
  const expiration = Date.parse(`${trx.expiration}Z`) / 1000
  if (!Number.isSafeInteger(expiration)) return undefined
  const w = new BinaryWriter(256)
  w.uint32(expiration)
    .uint16(trx.ref_block_num)
    .uint32(trx.ref_block_prefix)
    .varuint32(trx.max_net_usage_words)
    .uint8(trx.max_cpu_usage_ms)
    .varuint32(trx.delay_sec)
  for (const list of [trx.context_free_actions, trx.actions]) {
    w.varuint32(list.length)
    for (const a of list) {
      w.uint64(nameToBigInt(a.account)).uint64(nameToBigInt(a.name)).varuint32(a.authorization.length)
      for (const l of a.authorization) w.uint64(nameToBigInt(l.actor)).uint64(nameToBigInt(l.permission))
      w.bytes(fromHex(a.hex_data))
    }
  }
  const extensions = trx.transaction_extensions as readonly (readonly [number, string])[]
  w.varuint32(extensions.length)
  for (const [type, data] of extensions) w.uint16(type).bytes(fromHex(data))
  const packed = w.finish()
  return transactionId(packed) === id ? packed : undefined
}

/** Every executed action trace of a nested `inline_traces` tree, in execution (global sequence) order. */
function executedTraces(roots: readonly WireActionTrace[]): WireActionTrace[] {
  const out: WireActionTrace[] = []
  const visit = (t: WireActionTrace) => {
    if (t.receipt) out.push(t)
    t.inline_traces.forEach(visit)
  }
  roots.forEach(visit)
  return out.sort((a, b) => Number(a.receipt?.global_sequence) - Number(b.receipt?.global_sequence))
}

/** A lifecycle's trace as nodeos's history_plugin prints it (flat, numbers as numbers, data as hex when undecoded). */
function nodeosTrace(t: WireActionTrace) {
  const { inline_traces: _children, return_value, receipt, act, ...rest } = t
  return {
    ...rest,
    receipt: receipt && {
      ...receipt,
      global_sequence: uint64(receipt.global_sequence),
      recv_sequence: uint64(receipt.recv_sequence),
      auth_sequence: receipt.auth_sequence.map(([account, seq]) => [account, uint64(seq)]),
    },
    act: { ...act, data: act.data === undefined ? act.hex_data : act.data },
    account_ram_deltas: t.account_ram_deltas.map((d) => ({ account: d.account, delta: uint64(d.delta) })),
    error_code: null,
    return_value_hex_data: return_value,
  }
}

/** The answer for an executed transaction's lifecycle; undefined when it has no execution. */
export function v1TransactionOf(lifecycle: TransactionLifecycle, lib: number, withTraces: boolean) {
  const execution = lifecycle.execution_trace
  const trx = lifecycle.transaction
  if (!execution || !trx || lifecycle.transaction_status === 'forked_out') return undefined
  const packed = execution.scheduled ? undefined : repackTransaction(trx, lifecycle.id)
  const cfd = packContextFreeData(trx.context_free_data.map((hex) => fromHex(hex)))
  return {
    id: lifecycle.id,
    trx: {
      receipt: {
        status: execution.receipt.status,
        cpu_usage_us: execution.receipt.cpu_usage_us,
        net_usage_words: execution.receipt.net_usage_words,
        // A deferred transaction's receipt names it by id, as nodeos's.
        trx: execution.scheduled
          ? [0, lifecycle.id]
          : [
              1,
              {
                signatures: trx.signatures,
                compression: 'none',
                packed_context_free_data: toHex(cfd),
                packed_trx: packed ? toHex(packed) : '',
              },
            ],
      },
      trx,
    },
    block_num: execution.block_num,
    block_time: execution.block_time,
    last_irreversible_block: lib,
    ...(withTraces ? { traces: executedTraces(execution.action_traces).map(nodeosTrace) } : {}),
  }
}

export type V1GetTransactionResponse = NonNullable<ReturnType<typeof v1TransactionOf>>

/** The answer for `id` (64 hex digits, any case), or nodeos's not-found body. */
export async function v1GetTransaction(
  services: { lifecycle: LifecycleService; lib: () => Promise<number> },
  request: V1GetTransactionRequest,
): Promise<{ found: V1GetTransactionResponse } | { notFound: V1TransactionNotFound }> {
  const id = request.id.toLowerCase()
  const [lifecycle, lib] = await Promise.all([services.lifecycle.lifecycle(id), services.lib()])
  const found = lifecycle && v1TransactionOf(lifecycle, lib, request.traces !== false)
  return found ? { found } : { notFound: v1TransactionNotFound(request.id) }
}
