import type { ABI } from '@wharfkit/antelope'
import { actionType, blockSlotToMs, createWharfkitDecoder, formatNodeosTime, formatNodeosTimeSec, fromHex, refBlockPrefix, toHex, transactionId } from '../antelope/index.ts'
import { decodeShipType } from '../ship/index.ts'
import { unpackedContextFreeData, unpackedTrx } from './chain/intake.ts'
import type { ActionTrace, TransactionTrace } from './chain/traces.ts'
import { TRX_STATUS_NAMES } from './chain/traces.ts'
import type { StoredBlock } from './storage/block-log.ts'

/** nodeos JSON for the HTTP API: uint64 as a number up to 32 bits, as a string above (fc's rule). */
export function u64(value: bigint | number): number | string {
  const v = BigInt(value)
  return v <= 0xffffffffn && v >= -0x80000000n ? Number(v) : v.toString()
}

const decoder = createWharfkitDecoder()

/** Action data decoded with the account's ABI, or its hex when it cannot be. */
function actionData(abiOf: (account: string) => ABI | undefined, account: string, name: string, data: Uint8Array): unknown {
  const abi = abiOf(account)
  const type = abi && actionType(abi, name)
  if (!abi || !type) return toHex(data)
  const decoded = decoder.decode({ abi, type, data })
  return decoded.ok ? decoded.value : toHex(data)
}

export interface TraceContext {
  readonly blockNum: number
  readonly blockSlot: number
  readonly producerBlockId: string | null
  readonly abiOf: (account: string) => ABI | undefined
}

function actionTraceJson(t: ActionTrace, trxId: string, c: TraceContext) {
  const blockTime = formatNodeosTime(blockSlotToMs(c.blockSlot))
  return {
    action_ordinal: t.actionOrdinal,
    creator_action_ordinal: t.creatorActionOrdinal,
    closest_unnotified_ancestor_action_ordinal: t.closestUnnotifiedAncestorActionOrdinal,
    receipt: t.receipt && {
      receiver: t.receipt.receiver,
      act_digest: t.receipt.actDigest,
      global_sequence: u64(t.receipt.globalSequence),
      recv_sequence: u64(t.receipt.recvSequence),
      auth_sequence: t.receipt.authSequence.map(([account, seq]) => [account, u64(seq)]),
      code_sequence: t.receipt.codeSequence,
      abi_sequence: t.receipt.abiSequence,
    },
    receiver: t.receiver,
    act: {
      account: t.act.account,
      name: t.act.name,
      authorization: t.act.authorization,
      data: actionData(c.abiOf, t.act.account, t.act.name, t.act.data),
      hex_data: toHex(t.act.data),
    },
    context_free: t.contextFree,
    elapsed: 0,
    console: '',
    trx_id: trxId,
    block_num: c.blockNum,
    block_time: blockTime,
    producer_block_id: c.producerBlockId,
    account_ram_deltas: t.accountRamDeltas.map((d) => ({ account: d.account, delta: u64(d.delta) })),
    except: null,
    error_code: null,
    return_value_hex_data: toHex(t.returnValue),
  }
}

/** The `processed` object of push/send/compute_transaction answers. */
export function transactionTraceJson(trace: TransactionTrace, c: TraceContext) {
  return {
    id: trace.id,
    block_num: c.blockNum,
    block_time: formatNodeosTime(blockSlotToMs(c.blockSlot)),
    producer_block_id: c.producerBlockId,
    receipt: { status: TRX_STATUS_NAMES[trace.status], cpu_usage_us: trace.cpuUsageUs, net_usage_words: trace.netUsageWords },
    elapsed: 0,
    net_usage: trace.netUsage,
    scheduled: trace.scheduled,
    action_traces: trace.actionTraces.map((t) => actionTraceJson(t, trace.id, c)),
    account_ram_delta: null,
    except: trace.except ?? null,
    error_code: null,
  }
}

type ShipAction = { account: string; name: string; authorization: { actor: string; permission: string }[]; data: string }
type ShipReceipt = { status: number; cpu_usage_us: number; net_usage_words: number; trx: ['transaction_id', string] | ['packed_transaction', { signatures: string[]; compression: number; packed_context_free_data: string; packed_trx: string }] }
type ShipBlock = { timestamp: string; producer: string; confirmed: number; previous: string; transaction_mroot: string; action_mroot: string; schedule_version: number; producer_signature: string; transactions: ShipReceipt[] }
type ShipTransaction = { expiration: string; ref_block_num: number; ref_block_prefix: number; max_net_usage_words: number; max_cpu_usage_ms: number; delay_sec: number; context_free_actions: ShipAction[]; actions: ShipAction[]; transaction_extensions: unknown[] }

/** nodeos's `get_block` answer for a stored block. */
export function blockJson(block: StoredBlock, abiOf: (account: string) => ABI | undefined) {
  const b = decodeShipType<ShipBlock>('signed_block', block.block)
  const actionJson = (a: ShipAction) => ({ ...a, data: actionData(abiOf, a.account, a.name, Buffer.from(a.data, 'hex')), hex_data: a.data })
  return {
    timestamp: formatNodeosTime(blockSlotToMs(block.slot)),
    producer: b.producer,
    confirmed: b.confirmed,
    previous: b.previous,
    transaction_mroot: b.transaction_mroot,
    action_mroot: b.action_mroot,
    schedule_version: b.schedule_version,
    new_producers: null,
    producer_signature: b.producer_signature,
    transactions: b.transactions.map((r) => {
      const base = { status: TRX_STATUS_NAMES[r.status], cpu_usage_us: r.cpu_usage_us, net_usage_words: r.net_usage_words }
      if (r.trx[0] === 'transaction_id') return { ...base, trx: r.trx[1] }
      const p = r.trx[1]
      // The receipt keeps packed_trx as pushed (zlib or not); the id and the decoded transaction are of its unpacked bytes.
      const packed = { compression: p.compression, packedTrx: fromHex(p.packed_trx), packedContextFreeData: fromHex(p.packed_context_free_data) }
      const unpacked = unpackedTrx(packed)
      const trx = decodeShipType<ShipTransaction>('transaction', unpacked)
      return {
        ...base,
        trx: {
          id: transactionId(unpacked),
          signatures: p.signatures,
          compression: p.compression === 1 ? 'zlib' : 'none',
          packed_context_free_data: p.packed_context_free_data,
          context_free_data: unpackedContextFreeData(packed).map(toHex),
          packed_trx: p.packed_trx,
          transaction: {
            expiration: formatNodeosTimeSec(Date.parse(`${trx.expiration}Z`) / 1000),
            ref_block_num: trx.ref_block_num,
            ref_block_prefix: trx.ref_block_prefix,
            max_net_usage_words: trx.max_net_usage_words,
            max_cpu_usage_ms: trx.max_cpu_usage_ms,
            delay_sec: trx.delay_sec,
            context_free_actions: trx.context_free_actions.map(actionJson),
            actions: trx.actions.map(actionJson),
          },
        },
      }
    }),
    id: block.id,
    block_num: block.num,
    ref_block_prefix: refBlockPrefix(block.id),
  }
}

