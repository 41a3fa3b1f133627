import { toHex } from '../../src/antelope/index.ts'
import type { FinalityDataValue, FinalityExtensionValue } from '../../src/ship/index.ts'

type Json = Record<string, unknown>

/** The fast decoder's value in the ABI decoder's JSON shape. */
export function finalityDataAsJson(f: FinalityDataValue): Json {
  const time = new Date(Date.UTC(2000, 0, 1) + f.latestQcClaimTimestampSlot * 500).toISOString().slice(0, -1)
  const p = f.pendingFinalizerPolicy
  return {
    major_version: f.majorVersion,
    minor_version: f.minorVersion,
    active_finalizer_policy_generation: f.activeFinalizerPolicyGeneration,
    action_mroot: f.actionMroot,
    reversible_blocks_mroot: f.reversibleBlocksMroot,
    latest_qc_claim_block_num: f.latestQcClaimBlockNum,
    latest_qc_claim_finality_digest: f.latestQcClaimFinalityDigest,
    latest_qc_claim_timestamp: time,
    base_digest: f.baseDigest,
    pending_finalizer_policy: p
      ? {
          generation: p.generation,
          threshold: String(p.threshold),
          finalizers: p.finalizers.map((x) => ({
            description: x.description,
            weight: String(x.weight),
            public_key: x.publicKey,
          })),
        }
      : null,
    last_pending_finalizer_policy_generation: f.lastPendingFinalizerPolicyGeneration,
  }
}

/** 64-bit integers as strings on both sides (wharfkit gives numbers up to 32 bits' worth of digits). */
export function normalizeUint64(json: Json): Json {
  return JSON.parse(
    JSON.stringify(json, (key, value) => (['threshold', 'weight'].includes(key) ? String(value) : value)),
  ) as Json
}

export function finalityExtensionAsJson(e: FinalityExtensionValue): Json {
  const f = e.newFinalizerPolicyDiff
  const p = e.newProposerPolicyDiff
  return {
    qc_claim: { block_num: e.qcClaim.blockNum, is_strong_qc: e.qcClaim.isStrongQc },
    new_finalizer_policy_diff: f
      ? {
          generation: f.generation,
          threshold: String(f.threshold),
          remove_indexes: f.removeIndexes,
          insert_indexes: f.insertIndexes.map((i) => ({
            index: i.index,
            value: {
              description: i.value.description,
              weight: String(i.value.weight),
              public_key: toHex(i.value.publicKey),
            },
          })),
        }
      : null,
    new_proposer_policy_diff: p
      ? {
          version: p.version,
          proposal_time: new Date(Date.UTC(2000, 0, 1) + p.proposalTimeSlot * 500).toISOString().slice(0, -1),
          remove_indexes: p.removeIndexes,
          insert_indexes: p.insertIndexes.map((i) => ({
            index: i.index,
            value: {
              producer_name: i.value.producerName,
              authority: ['block_signing_authority_v0', { threshold: i.value.threshold, keys: i.value.keys }],
            },
          })),
        }
      : null,
  }
}
