import {
  BinaryWriter,
  nameToBigInt,
  refBlockPrefix,
  blockSlotToMs,
  transactionId,
  type RawAction,
} from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import type { DecodedTransaction } from './chain/intake.ts'
import { GENESIS_USERS } from './chain/boot.ts'

/** The shape of each built block. */
export interface ChainShape {
  readonly blocks: number
  /** eosio.token transfers per block (one action each, three action traces). */
  readonly transfersPerBlock: number
  /** rawdb `put` actions per block (one action each, a row written). */
  readonly rawdbPutsPerBlock: number
  /** Actions per transaction. */
  readonly actionsPerTransaction?: number
}

export interface BuildProgress {
  readonly blocks: number
  readonly actions: number
}

/**
 * 0.0001 to 1.0000 EOS, scattered, so quantities repeat about once per 10,000 transfers (search has rare terms to
 * find).
 */
const transferUnits = (n: number): bigint => BigInt(1 + ((n * 7919) % 10_000))

function transferData(from: string, to: string, units: bigint, memo: string): Uint8Array {
  const w = new BinaryWriter(64).uint64(nameToBigInt(from)).uint64(nameToBigInt(to))
  return w.int64(units).uint64(0x534f4504n).string(memo).finish() // symbol 4,EOS
}

function putData(scope: string, key: bigint, value: Uint8Array): Uint8Array {
  const w = new BinaryWriter(64 + value.length).uint64(nameToBigInt(scope)).uint64(nameToBigInt('rows'))
  return w.uint64(key).uint64(nameToBigInt('rawdb')).bytes(value).finish()
}

function packTransaction(
  expirationSec: number,
  refBlockNum: number,
  refPrefix: number,
  nonce: number,
  actions: readonly RawAction[],
): Uint8Array {
  const w = new BinaryWriter(128 + actions.length * 96)
  w.uint32(expirationSec)
    .uint16(refBlockNum & 0xffff)
    .uint32(refPrefix)
    .varuint32(nonce)
    .uint8(0)
    .varuint32(0)
    .varuint32(0)
  w.varuint32(actions.length)
  for (const a of actions) {
    w.uint64(nameToBigInt(a.account)).uint64(nameToBigInt(a.name)).varuint32(a.authorization.length)
    for (const l of a.authorization) w.uint64(nameToBigInt(l.actor)).uint64(nameToBigInt(l.permission))
    w.bytes(a.data)
  }
  return w.varuint32(0).finish()
}

/**
 * Produces blocks of a fixed shape as fast as the chain can execute them: transactions are built
 * already decoded and applied as trusted input (no signature recovery), and blocks carry a
 * well-formed placeholder signature unless the chain signs. Traces, deltas, ids and receipts are
 * the real ones. Blocks are written in disk batches.
 */
export function buildChain(chain: Chain, shape: ChainShape, onProgress?: (p: BuildProgress) => void): BuildProgress {
  const perTrx = Math.max(1, shape.actionsPerTransaction ?? 1)
  let actions = 0
  let nonce = 0
  const batchSize = 50
  for (let done = 0; done < shape.blocks;) {
    const count = Math.min(batchSize, shape.blocks - done)
    chain.batch(() => {
      for (let b = 0; b < count; b++) {
        const lib = chain.block(chain.lib.blockNum)!
        const expiration = Math.floor(blockSlotToMs(chain.head.slot) / 1000) + 600
        const planned: RawAction[] = []
        for (let i = 0; i < shape.transfersPerBlock; i++) {
          const from = GENESIS_USERS[(nonce + i) % 3]
          const to = GENESIS_USERS[(nonce + i + 1) % 3]
          planned.push({
            account: 'eosio.token',
            name: 'transfer',
            authorization: [{ actor: from, permission: 'active' }],
            data: transferData(from, to, transferUnits(nonce + i), `bench ${nonce + i}`),
          })
        }
        for (let i = 0; i < shape.rawdbPutsPerBlock; i++) {
          planned.push({
            account: 'rawdb',
            name: 'put',
            authorization: [{ actor: 'rawdb', permission: 'active' }],
            data: putData('bench', BigInt(actions + i), new Uint8Array(32).fill(i & 0xff)),
          })
        }
        for (let i = 0; i < planned.length; i += perTrx) {
          const group = planned.slice(i, i + perTrx)
          const packedTrx = packTransaction(expiration, lib.num, refBlockPrefix(lib.id), nonce++, group)
          const trx: DecodedTransaction = {
            id: transactionId(packedTrx),
            input: { signatures: [], compression: 0, packedContextFreeData: new Uint8Array(0), packedTrx },
            packedTrx,
            expirationSec: expiration,
            refBlockNum: lib.num & 0xffff,
            refBlockPrefix: refBlockPrefix(lib.id),
            maxNetUsageWords: nonce - 1,
            maxCpuUsageMs: 0,
            delaySec: 0,
            contextFreeActions: [],
            actions: group,
            contextFreeData: [],
          }
          chain.pushDecodedTrusted(trx)
        }
        actions += planned.length
        chain.produceBlock()
      }
    })
    done += count
    onProgress?.({ blocks: done, actions })
  }
  return { blocks: shape.blocks, actions }
}
