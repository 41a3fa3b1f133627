import type { RawAction } from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import { GENESIS_USERS } from './chain/boot.ts'
import { pushDenseBlock } from './dense-profile.ts'
import { trustedHeaderFor, trustedTransaction } from './trusted-transaction.ts'
import { rawdbPutAction, transferAction } from './workload-actions.ts'

/** The bench shape of each built block (the default profile). */
export interface BenchShape {
  readonly profile?: 'bench'
  readonly blocks: number
  /** eosio.token transfers per block (one action each, three action traces). */
  readonly transfersPerBlock: number
  /** rawdb `put` actions per block (one action each, a row written). */
  readonly rawdbPutsPerBlock: number
  /** Actions per transaction. */
  readonly actionsPerTransaction?: number
}

/** Blocks of the dense profile (src/devchain/dense-profile.ts): about 300 transactions a block, modelled on mainnet. */
export interface DenseShape {
  readonly profile: 'dense'
  readonly blocks: number
}

export type ChainShape = BenchShape | DenseShape

export interface BuildProgress {
  readonly blocks: number
  readonly actions: number
}

/**
 * 0.0001 to 1.0000 EOS, scattered, so quantities repeat about once per 10,000 transfers (search has rare terms to
 * find).
 */
const transferUnits = (n: number): bigint => BigInt(1 + ((n * 7919) % 10_000))

/** Pushes one bench-shape block's transactions; returns the next nonce. */
function pushBenchBlock(chain: Chain, shape: BenchShape, firstAction: number, firstNonce: number): number {
  const perTrx = Math.max(1, shape.actionsPerTransaction ?? 1)
  let nonce = firstNonce
  const planned: RawAction[] = []
  for (let i = 0; i < shape.transfersPerBlock; i++) {
    const from = GENESIS_USERS[(nonce + i) % 3]
    const to = GENESIS_USERS[(nonce + i + 1) % 3]
    planned.push(transferAction(from, to, transferUnits(nonce + i), `bench ${nonce + i}`))
  }
  for (let i = 0; i < shape.rawdbPutsPerBlock; i++)
    planned.push(rawdbPutAction('bench', BigInt(firstAction + i), new Uint8Array(32).fill(i & 0xff)))
  for (let i = 0; i < planned.length; i += perTrx)
    chain.pushDecodedTrusted(trustedTransaction(trustedHeaderFor(chain, nonce++), planned.slice(i, i + perTrx)))
  return nonce
}

/**
 * Produces blocks of a fixed shape as fast as the chain can execute them: transactions are built
 * already decoded and applied as trusted input (no signature recovery), and blocks carry a
 * well-formed placeholder signature unless the chain signs. Traces, deltas, ids and receipts are
 * the real ones. Blocks are written in disk batches.
 */
export function buildChain(chain: Chain, shape: ChainShape, onProgress?: (p: BuildProgress) => void): BuildProgress {
  let actions = 0
  let nonce = 0
  const batchSize = 50
  for (let done = 0; done < shape.blocks;) {
    const count = Math.min(batchSize, shape.blocks - done)
    chain.batch(() => {
      for (let b = 0; b < count; b++) {
        if (shape.profile === 'dense') actions += pushDenseBlock(chain, (trx) => chain.pushDecodedTrusted(trx))
        else {
          nonce = pushBenchBlock(chain, shape, actions, nonce)
          actions += shape.transfersPerBlock + shape.rawdbPutsPerBlock
        }
        chain.produceBlock()
      }
    })
    done += count
    onProgress?.({ blocks: done, actions })
  }
  return { blocks: shape.blocks, actions }
}
