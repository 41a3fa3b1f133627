import { deflateSync } from 'node:zlib'
import {
  BinaryWriter,
  blockSlotToMs,
  nameToBigInt,
  refBlockPrefix,
  transactionId,
  type RawAction,
} from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import type { DecodedTransaction } from './chain/intake.ts'

/** The header of the transactions a generator builds: TAPOS on a block, an expiration and a unique nonce. */
export interface TrustedHeader {
  readonly expirationSec: number
  /** The TAPOS block (the chain's LIB, so a fork does not invalidate the transaction). */
  readonly ref: { readonly num: number; readonly id: string }
  /** Written as `max_net_usage_words`, which the devchain does not enforce: it makes ids unique. */
  readonly nonce: number
  /** Seconds the transaction is delayed (a deferred transaction: executes in a later block). */
  readonly delaySec?: number
  /** zlib-pack the transaction (`compression: 1`), as some wallets and nodeos clients send them. */
  readonly zlib?: boolean
}

/**
 * The header of a transaction for the next block: TAPOS on LIB, expiring 10 minutes after the head block (or after
 * `nowMs` when later: a live chain that was idle has an old head).
 */
export function trustedHeaderFor(chain: Chain, nonce: number, nowMs = 0): TrustedHeader {
  const lib = chain.block(chain.lib.blockNum)!
  const fromMs = Math.max(blockSlotToMs(chain.head.slot), nowMs)
  return { expirationSec: Math.floor(fromMs / 1000) + 600, ref: { num: lib.num, id: lib.id }, nonce }
}

function packTransaction(header: TrustedHeader, actions: readonly RawAction[]): Uint8Array {
  const w = new BinaryWriter(128 + actions.reduce((sum, a) => sum + 40 + a.data.length, 0))
  w.uint32(header.expirationSec)
    .uint16(header.ref.num & 0xffff)
    .uint32(refBlockPrefix(header.ref.id))
    .varuint32(header.nonce)
    .uint8(0)
    .varuint32(header.delaySec ?? 0)
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
 * A transaction built already decoded, for `chain.pushDecodedTrusted` (no signature recovery, no decoding): what the
 * chain builder and the dense workload push. Its packed form is the real one (zlib-deflated when asked), so the block,
 * its receipts and the transaction id are what nodeos would produce for it.
 */
export function trustedTransaction(header: TrustedHeader, actions: readonly RawAction[]): DecodedTransaction {
  const packedTrx = packTransaction(header, actions)
  const sent = header.zlib ? new Uint8Array(deflateSync(packedTrx)) : packedTrx
  return {
    id: transactionId(packedTrx),
    input: {
      signatures: [],
      compression: header.zlib ? 1 : 0,
      packedContextFreeData: new Uint8Array(0),
      packedTrx: sent,
    },
    packedTrx,
    expirationSec: header.expirationSec,
    refBlockNum: header.ref.num & 0xffff,
    refBlockPrefix: refBlockPrefix(header.ref.id),
    maxNetUsageWords: header.nonce,
    maxCpuUsageMs: 0,
    delaySec: header.delaySec ?? 0,
    contextFreeActions: [],
    actions,
    contextFreeData: [],
  }
}
