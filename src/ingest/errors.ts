import { AntlerError } from '../antelope/index.ts'

/** What the store holds where the node disagrees with it. */
export type HistoryMismatch =
  | {
      readonly kind: 'chain_id'
      readonly storeChainId: string
      readonly nodeChainId: string
      /** The store's head and LIB (absent for a store holding no block). */
      readonly storeHead?: number
      readonly storeLib?: number
    }
  | {
      readonly kind: 'block'
      readonly blockNum: number
      readonly storeId: string
      readonly nodeId: string
      readonly storeLib: number
    }

/**
 * The node serves another history than the store's: its chain id differs from the one the store recorded, or its
 * block at or below the store's LIB differs from the stored one. Retrying cannot help; the message says what can.
 */
export function ShipHistoryMismatchError(mismatch: HistoryMismatch): AntlerError {
  return new AntlerError(
    'ship_history_mismatch_error',
    mismatch.kind === 'chain_id'
      ? {
          kind: 'chain_id',
          blockNum: mismatch.storeHead ?? null,
          storeId: mismatch.storeChainId,
          nodeId: mismatch.nodeChainId,
          storeLib: mismatch.storeLib ?? null,
        }
      : {
          kind: 'block',
          blockNum: mismatch.blockNum,
          storeId: mismatch.storeId,
          nodeId: mismatch.nodeId,
          storeLib: mismatch.storeLib,
        },
  )
}
