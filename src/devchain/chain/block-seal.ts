import type { PrivateKey } from '@wharfkit/antelope'
import { fromHex, legacyMerkleRoot, toHex, transactionReceiptDigest } from '../../antelope/index.ts'
import { FINALITY_EXTENSION_ID, SAVANNA_SCHEDULE_VERSION } from '../../ship/index.ts'
import { encodeDeltas } from '../state/deltas.ts'
import type { StateDb } from '../state/state-db.ts'
import type { StoredBlock, StoredInput } from '../storage/block-log.ts'
import { blockIdOf, packSignedBlock, signatureBytes, type BlockHeader, type BlockReceipt } from './block.ts'
import type { SavannaBlockInputs } from './pending-block.ts'
import {
  encodeFinalityData,
  encodeFinalityExtension,
  savannaActionMroot,
  savannaMerkleRoot,
  standInDigest,
} from './savanna.ts'
import { encodeTraces, type TransactionTrace } from './traces.ts'

/** A pending block's contents once its transactions have run: what sealing turns into a stored block. */
export interface BlockToSeal {
  readonly num: number
  readonly slot: number
  readonly producer: string
  readonly previous: StoredBlock
  readonly receipts: readonly BlockReceipt[]
  readonly traces: readonly TransactionTrace[]
  /** Receipt digests of every executed action, in execution order (the legacy action merkle leaves). */
  readonly actionDigests: readonly Uint8Array[]
  readonly inputs: StoredInput[]
  readonly savanna: SavannaBlockInputs | undefined
  /** The state, whose open session holds exactly this block's changes. */
  readonly state: StateDb
  readonly producerKey: PrivateKey | undefined
}

/** Seals a block: mroots, id, signature, and the SHiP payloads. The state session stays open. */
export function sealBlock(block: BlockToSeal, placeholderSignature: string): StoredBlock {
  const receiptLeaves = block.receipts.map((r) =>
    transactionReceiptDigest({
      status: r.status,
      cpuUsageUs: r.cpuUsageUs,
      netUsageWords: r.netUsageWords,
      trx:
        r.trx.kind === 'id'
          ? { kind: 'id', id: r.trx.id }
          : {
              kind: 'packed',
              signatures: r.trx.packed.signatures.map(signatureBytes),
              compression: r.trx.packed.compression,
              packedContextFreeData: r.trx.packed.packedContextFreeData,
              packedTrx: r.trx.packed.packedTrx,
            },
    }),
  )
  let header: BlockHeader = {
    slot: block.slot,
    producer: block.producer,
    previous: block.previous.id,
    transactionMroot: toHex(legacyMerkleRoot(receiptLeaves)),
    actionMroot: toHex(legacyMerkleRoot(block.actionDigests)),
    scheduleVersion: 0,
  }
  let finalityData: Uint8Array | undefined
  const sv = block.savanna
  if (sv) {
    // Savanna: the new merkle for transactions, the finality root in the header's action_mroot,
    // and the real action root only in finality_data.
    const transactionMroot = savannaMerkleRoot(receiptLeaves)
    const claimedId = sv.claimed?.id ?? block.previous.id
    header = {
      ...header,
      transactionMroot: toHex(transactionMroot),
      actionMroot: toHex(standInDigest('finality_mroot', claimedId, sv.qcClaim.blockNum)),
      scheduleVersion: SAVANNA_SCHEDULE_VERSION,
      headerExtensions: [
        {
          type: FINALITY_EXTENSION_ID,
          data: encodeFinalityExtension({
            qcClaim: sv.qcClaim,
            genesis: sv.genesis && { ...sv.genesis, slot: block.slot },
          }),
        },
      ],
    }
    finalityData = encodeFinalityData({
      actionMroot: savannaActionMroot(block.traces),
      reversibleBlocksMroot: savannaMerkleRoot(sv.reversibleIds.map(fromHex)),
      qcClaim: sv.qcClaim,
      qcClaimFinalityDigest: standInDigest('finality_digest', claimedId, sv.qcClaim.blockNum),
      qcClaimSlot: sv.claimed?.slot ?? block.slot,
      baseDigest: standInDigest('base_digest', block.previous.id, transactionMroot),
      pendingPolicy: sv.genesis?.policy,
    })
  }
  const id = blockIdOf(header, block.num)
  const signature = block.producerKey ? block.producerKey.signDigest(fromHex(id)).toString() : placeholderSignature
  // The state session's entries are exactly this block's changes: the SHiP deltas.
  const deltas = encodeDeltas(block.state.changes())
  return {
    num: block.num,
    id,
    previous: block.previous.id,
    slot: block.slot,
    producer: block.producer,
    block: packSignedBlock(header, signature, block.receipts),
    traces: encodeTraces(block.traces),
    deltas,
    ...(finalityData ? { finalityData } : {}),
    inputs: block.inputs,
  }
}
