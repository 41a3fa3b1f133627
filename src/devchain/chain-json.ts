import type { ABI } from '@wharfkit/antelope'
import {
  actionType,
  blockSlotToMs,
  createWharfkitDecoder,
  formatNodeosTime,
  formatNodeosTimeSec,
  fromHex,
  refBlockPrefix,
  toHex,
  transactionId,
} from '../antelope/index.ts'
import { decodeShipType, type FinalityExtensionValue } from '../ship/index.ts'
import type { Chain } from './chain/chain.ts'
import { blsKeyText, finalityExtensionOf } from './chain/savanna.ts'
import { headerOfStored } from './chain/pending-block.ts'
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
function actionData(
  abiOf: (account: string) => ABI | undefined,
  account: string,
  name: string,
  data: Uint8Array,
): unknown {
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
    receipt: {
      status: TRX_STATUS_NAMES[trace.status],
      cpu_usage_us: trace.cpuUsageUs,
      net_usage_words: trace.netUsageWords,
    },
    elapsed: 0,
    net_usage: trace.netUsage,
    scheduled: trace.scheduled,
    action_traces: trace.actionTraces.map((t) => actionTraceJson(t, trace.id, c)),
    account_ram_delta: null,
    except: trace.except ?? null,
    error_code: null,
  }
}

type ShipAction = {
  account: string
  name: string
  authorization: { actor: string; permission: string }[]
  data: string
}
type ShipReceipt = {
  status: number
  cpu_usage_us: number
  net_usage_words: number
  trx:
    | ['transaction_id', string]
    | [
        'packed_transaction',
        { signatures: string[]; compression: number; packed_context_free_data: string; packed_trx: string },
      ]
}
type ShipBlock = {
  timestamp: string
  producer: string
  confirmed: number
  previous: string
  transaction_mroot: string
  action_mroot: string
  schedule_version: number
  producer_signature: string
  transactions: ShipReceipt[]
}
type ShipTransaction = {
  expiration: string
  ref_block_num: number
  ref_block_prefix: number
  max_net_usage_words: number
  max_cpu_usage_ms: number
  delay_sec: number
  context_free_actions: ShipAction[]
  actions: ShipAction[]
  transaction_extensions: unknown[]
}

/** The finality extension's fields as Spring's chain API renders them in `get_block`. */
function finalityJson(block: StoredBlock, actionMroot: string) {
  const ext: FinalityExtensionValue | undefined = finalityExtensionOf(block.block)
  if (!ext) return {}
  const f = ext.newFinalizerPolicyDiff
  const p = ext.newProposerPolicyDiff
  return {
    // In a proper Savanna block the header's action_mroot field is the finality tree root.
    finality_mroot: actionMroot,
    qc_claim: { block_num: ext.qcClaim.blockNum, is_strong_qc: ext.qcClaim.isStrongQc },
    ...(f && {
      new_finalizer_policy_diff: {
        generation: f.generation,
        threshold: u64(f.threshold),
        remove_indexes: f.removeIndexes,
        insert_indexes: f.insertIndexes.map((i) => ({
          index: i.index,
          value: {
            description: i.value.description,
            weight: u64(i.value.weight),
            public_key: blsKeyText(i.value.publicKey),
          },
        })),
      },
    }),
    ...(p && {
      new_proposer_policy_diff: {
        version: p.version,
        proposal_time: formatNodeosTime(blockSlotToMs(p.proposalTimeSlot)),
        remove_indexes: p.removeIndexes,
        insert_indexes: p.insertIndexes.map((i) => ({
          index: i.index,
          value: {
            producer_name: i.value.producerName,
            authority: [0, { threshold: i.value.threshold, keys: i.value.keys }],
          },
        })),
      },
    }),
  }
}

/** nodeos's `get_block` answer for a stored block (Spring's Savanna fields for Savanna blocks). */
export function blockJson(block: StoredBlock, abiOf: (account: string) => ABI | undefined) {
  const b = decodeShipType<ShipBlock>('signed_block', block.block)
  const actionJson = (a: ShipAction) => ({
    ...a,
    data: actionData(abiOf, a.account, a.name, Buffer.from(a.data, 'hex')),
    hex_data: a.data,
  })
  return {
    timestamp: formatNodeosTime(blockSlotToMs(block.slot)),
    producer: b.producer,
    confirmed: b.confirmed,
    previous: b.previous,
    transaction_mroot: b.transaction_mroot,
    action_mroot: b.action_mroot,
    schedule_version: b.schedule_version,
    new_producers: null,
    ...finalityJson(block, b.action_mroot),
    producer_signature: b.producer_signature,
    transactions: b.transactions.map((r) => {
      const base = {
        status: TRX_STATUS_NAMES[r.status],
        cpu_usage_us: r.cpu_usage_us,
        net_usage_words: r.net_usage_words,
      }
      if (r.trx[0] === 'transaction_id') return { ...base, trx: r.trx[1] }
      const p = r.trx[1]
      // The receipt keeps packed_trx as pushed (zlib or not); the id and the decoded transaction are of its unpacked
      // bytes.
      const packed = {
        compression: p.compression,
        packedTrx: fromHex(p.packed_trx),
        packedContextFreeData: fromHex(p.packed_context_free_data),
      }
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

/** Spring's `get_block_header_state`: any block, only block_num, id, header and additional_signatures filled. */
export function springBlockHeaderState(block: StoredBlock, abiOf: (account: string) => ABI | undefined) {
  const json = blockJson(block, abiOf)
  const extensions = headerOfStored(block).headerExtensions ?? []
  return {
    block_num: block.num,
    dpos_proposed_irreversible_blocknum: 0,
    dpos_irreversible_blocknum: 0,
    active_schedule: { version: 0, producers: [] },
    blockroot_merkle: { _active_nodes: [], _node_count: 0 },
    producer_to_last_produced: [],
    producer_to_last_implied_irb: [],
    valid_block_signing_authority: [0, { threshold: 0, keys: [] }],
    confirm_count: [],
    id: block.id,
    header: {
      timestamp: json.timestamp,
      producer: json.producer,
      confirmed: json.confirmed,
      previous: json.previous,
      transaction_mroot: json.transaction_mroot,
      action_mroot: json.action_mroot,
      schedule_version: json.schedule_version,
      header_extensions: extensions.map((e) => [e.type, toHex(e.data)]),
      producer_signature: json.producer_signature,
    },
    pending_schedule: { schedule_lib_num: 0, schedule_hash: '0'.repeat(64), schedule: { version: 0, producers: [] } },
    activated_protocol_features: null,
    additional_signatures: [],
  }
}

/** Spring's `get_finalizer_info`: the policy, and each finalizer's last vote (for the head's QC claim). */
export function finalizerInfoJson(chain: Chain) {
  const savanna = chain.savanna!
  const policy = {
    generation: savanna.policy.generation,
    threshold: u64(savanna.policy.threshold),
    finalizers: savanna.policy.finalizers.map((f) => ({
      description: f.description,
      weight: u64(f.weight),
      public_key: blsKeyText(f.publicKey),
    })),
  }
  if (chain.head.num < savanna.from)
    return { active_finalizer_policy: null, pending_finalizer_policy: null, last_tracked_votes: [] }
  const claim = finalityExtensionOf(chain.head.block)?.qcClaim
  const voted = claim ? chain.block(claim.blockNum) : undefined
  return {
    active_finalizer_policy: policy,
    pending_finalizer_policy: null,
    last_tracked_votes: voted
      ? savanna.policy.finalizers.map((f) => ({
          description: f.description,
          public_key: blsKeyText(f.publicKey),
          is_vote_strong: true,
          finalizer_policy_generation: savanna.policy.generation,
          voted_for_block_id: voted.id,
          voted_for_block_num: voted.num,
          voted_for_block_timestamp: formatNodeosTime(blockSlotToMs(voted.slot)),
        }))
      : [],
  }
}
