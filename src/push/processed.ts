import { formatNodeosTime, toHex, type AbiCache } from '../antelope/index.ts'
import type { ActionRecord, BlockRecord, BlockReader, StateReader, TransactionRecord } from '../store/index.ts'

/** SHiP's transaction status numbers as nodeos names them in JSON. */
const STATUS_NAMES = ['executed', 'soft_fail', 'hard_fail', 'delayed', 'expired', 'canceled'] as const

/** The name nodeos gives a transaction status number (`canceled` is Antler's own, for `canceldelay`). */
export function transactionStatusName(status: number): string {
  return STATUS_NAMES[status] ?? String(status)
}

/** nodeos JSON for 64-bit integers: a number when it fits in 32 bits, else a decimal string (fc's rule). */
function u64(value: bigint): number | string {
  return value <= 0xffffffffn && value >= -0x80000000n ? Number(value) : value.toString()
}

/**
 * The `processed` object of a nodeos push_transaction answer, built from what the store holds of
 * the transaction in `block`.
 *
 * Compared with the chain's own answer (test/push/guarantees.test.ts checks the rest is equal):
 * - `producer_block_id` (trace and every action) is the block's id; nodeos (and the devchain)
 *   answer a push before the block is produced and send null.
 * - `elapsed`, `console`, `context_free` and the receipts' `auth_sequence`, `code_sequence` and
 *   `abi_sequence` are the stored trace's (what SHiP sent: without `trace-history-debug-mode`
 *   nodeos zeroes `elapsed` and empties `console` there, so they are 0 and '' then); `net_usage`
 *   and the transaction's `elapsed` likewise. Actions stored before schema version 5 have no trace
 *   details: those fields read 0, '' and [] and `net_usage` is net_usage_words × 8.
 * - `account_ram_delta`, `except` and `error_code` are null: the store keeps none of them (an
 *   executed transaction has no exception; nodeos sets `account_ram_delta` only for a transaction
 *   run from the deferred table, the RAM its stored copy freed, which SHiP sends but is not stored).
 * - `closest_unnotified_ancestor_action_ordinal` is derived from the creator ordinals as nodeos
 *   assigns it: the nearest creator that is not a notification (receiver = account).
 * - without stored trace details, `context_free` is true for the first n top-level ordinals when
 *   the transaction declares n context-free actions and all of them have traces.
 * - `act.data` is decoded with the account's ABI as of the block; hex when there is none or it fails.
 */
export async function buildProcessed(args: {
  store: Pick<BlockReader, 'actionsOfTransaction'> & Pick<StateReader, 'abi'>
  abis: AbiCache
  record: TransactionRecord
  block: BlockRecord
  contextFreeActionCount: number
}): Promise<Record<string, unknown>> {
  const { record, block } = args
  const actions = (await args.store.actionsOfTransaction(record.id))
    .filter((a) => a.blockNum === record.blockNum)
    .sort((a, b) => a.actionOrdinal - b.actionOrdinal)
  const byOrdinal = new Map(actions.map((a) => [a.actionOrdinal, a]))
  const roots = actions.filter((a) => a.creatorActionOrdinal === 0).length
  const contextFree =
    args.contextFreeActionCount > 0 && roots >= args.contextFreeActionCount ? args.contextFreeActionCount : 0
  const decode = dataDecoder(args.store, args.abis, record.blockNum)
  const blockTime = formatNodeosTime(block.timestampMs)
  const actionTraces = []
  for (const a of actions) {
    actionTraces.push({
      action_ordinal: a.actionOrdinal,
      creator_action_ordinal: a.creatorActionOrdinal,
      closest_unnotified_ancestor_action_ordinal: closestUnnotifiedAncestor(a, byOrdinal),
      receipt: {
        receiver: a.receiver,
        act_digest: a.actDigest,
        global_sequence: u64(BigInt(a.globalSequence)),
        recv_sequence: u64(a.recvSequence),
        auth_sequence: (a.trace?.authSequence ?? []).map(([account, seq]) => [account, u64(BigInt(seq))]),
        code_sequence: a.trace?.codeSequence ?? 0,
        abi_sequence: a.trace?.abiSequence ?? 0,
      },
      receiver: a.receiver,
      act: {
        account: a.account,
        name: a.name,
        authorization: a.authorization.map((l) => ({ actor: l.actor, permission: l.permission })),
        data: await decode(a),
        hex_data: toHex(a.data),
      },
      context_free: a.trace?.contextFree ?? (a.creatorActionOrdinal === 0 && a.actionOrdinal <= contextFree),
      elapsed: a.trace?.elapsedUs ?? 0,
      console: a.trace?.console ?? '',
      trx_id: record.id,
      block_num: block.num,
      block_time: blockTime,
      producer_block_id: block.id,
      account_ram_deltas: a.ramDeltas.map((d) => ({ account: d.account, delta: u64(d.delta) })),
      except: null,
      error_code: null,
      return_value_hex_data: toHex(a.returnValue),
    })
  }
  return {
    id: record.id,
    block_num: block.num,
    block_time: blockTime,
    producer_block_id: block.id,
    receipt: {
      status: transactionStatusName(record.status),
      cpu_usage_us: record.cpuUsageUs,
      net_usage_words: record.netUsageWords,
    },
    elapsed: record.details?.elapsedUs ?? 0,
    net_usage: record.details?.netUsage ?? record.netUsageWords * 8,
    scheduled: record.scheduled,
    action_traces: actionTraces,
    account_ram_delta: null,
    except: null,
    error_code: null,
  }
}

/**
 * nodeos gives a notification, and an inline action, the ordinal of the first receiver of the
 * action that caused it; a first receiver is an action delivered to its own account.
 */
function closestUnnotifiedAncestor(action: ActionRecord, byOrdinal: ReadonlyMap<number, ActionRecord>): number {
  let creator = byOrdinal.get(action.creatorActionOrdinal)
  for (let hops = 0; creator && hops < byOrdinal.size; hops++) {
    if (creator.receiver === creator.account) return creator.actionOrdinal
    creator = byOrdinal.get(creator.creatorActionOrdinal)
  }
  return 0
}

/** Decodes action data with the ABI of each account as of `blockNum` (looked up once per account). */
function dataDecoder(
  store: Pick<StateReader, 'abi'>,
  abis: AbiCache,
  blockNum: number,
): (a: ActionRecord) => Promise<unknown> {
  const compiled = new Map<string, Promise<ReturnType<AbiCache['fromBinary']> | undefined>>()
  return async (a) => {
    let entry = compiled.get(a.account)
    if (!entry) {
      entry = store
        .abi({ account: a.account, blockNum })
        .then((found) => (found ? abis.fromBinary(found.abi) : undefined))
      compiled.set(a.account, entry)
    }
    const abi = await entry
    const type = abi?.ok ? abi.value.actionType(a.name) : undefined
    if (!abi?.ok || !type) return toHex(a.data)
    const decoded = abi.value.decode(type, a.data)
    return decoded.ok ? decoded.value : toHex(a.data)
  }
}
