import { formatNodeosTime, toHex } from '../antelope/index.ts'
import type { ActionDataDecoder } from '../lifecycle/index.ts'
import type { ActionRecord, BlockRecord } from '../store/index.ts'

/**
 * One action trace as nodeos's history_plugin renders it (`action_trace` of get_actions, `traces` of get_transaction).
 */
export interface NodeosActionTrace {
  readonly receipt: {
    readonly receiver: string
    readonly act_digest: string
    readonly global_sequence: number
    readonly recv_sequence: number | string
    readonly auth_sequence: readonly (readonly [string, number | string])[]
    readonly code_sequence: number
    readonly abi_sequence: number
  }
  readonly receiver: string
  readonly act: {
    readonly account: string
    readonly name: string
    readonly authorization: readonly { readonly actor: string; readonly permission: string }[]
    /** Decoded with the ABI in force at the block; the hex of the data when it cannot be (as nodeos). */
    readonly data: unknown
    readonly hex_data: string
  }
  readonly context_free: boolean
  readonly elapsed: number
  readonly console: string
  readonly trx_id: string
  readonly block_num: number
  readonly block_time: string
  readonly producer_block_id: string
  readonly account_ram_deltas: readonly { readonly account: string; readonly delta: number | string }[]
  readonly except: null
  readonly error_code: null
  readonly return_value_hex_data: string
  readonly action_ordinal: number
  readonly creator_action_ordinal: number
}

/** A 64-bit counter as nodeos's JSON prints it: a number while exact, else a string. */
export function uint64(value: bigint | number | string): number | string {
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : String(value)
}

/**
 * An executed action's trace in nodeos's shape. Executed actions only: the store keeps no receipt for a failed
 * transaction's actions, and nodeos's history_plugin records none either.
 */
export function nodeosActionTrace(
  action: ActionRecord,
  block: BlockRecord,
  decode: ActionDataDecoder,
): NodeosActionTrace {
  const hex = toHex(action.data)
  const decoded = decode(action.account, action.name, action.data)
  const trace = action.trace
  return {
    receipt: {
      receiver: action.receiver,
      act_digest: action.actDigest,
      global_sequence: action.globalSequence,
      recv_sequence: uint64(action.recvSequence),
      auth_sequence: (trace?.authSequence ?? []).map(([account, seq]) => [account, uint64(seq)] as const),
      code_sequence: trace?.codeSequence ?? 0,
      abi_sequence: trace?.abiSequence ?? 0,
    },
    receiver: action.receiver,
    act: {
      account: action.account,
      name: action.name,
      authorization: action.authorization.map((l) => ({ actor: l.actor, permission: l.permission })),
      data: decoded === undefined ? hex : decoded,
      hex_data: hex,
    },
    context_free: trace?.contextFree ?? false,
    elapsed: trace?.elapsedUs ?? 0,
    console: trace?.console ?? '',
    trx_id: action.trxId,
    block_num: block.num,
    block_time: formatNodeosTime(block.timestampMs),
    producer_block_id: block.id,
    account_ram_deltas: action.ramDeltas.map((d) => ({ account: d.account, delta: uint64(d.delta) })),
    except: null,
    error_code: null,
    return_value_hex_data: toHex(action.returnValue),
    action_ordinal: action.actionOrdinal,
    creator_action_ordinal: action.creatorActionOrdinal,
  }
}
