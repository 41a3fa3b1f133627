import { abiToJson, type AbiCache } from '../antelope/index.ts'
import type { Store } from '../store/index.ts'

export interface GetAbiSnapshotQuery {
  contract: string
  block?: number
  fetch?: boolean
}

export type AbiSnapshot =
  | { block_num: number; abi: unknown }
  | { block_num: number; present: true }
  | { block_num: null; present: false; error: string }

/**
 * get_abi_snapshot: the ABI `contract` had at `block` (default: head), with the block that set it; the ABI itself (as
 * JSON) when `fetch`. None (never set, or cleared by an empty `setabi`) is Hyperion's 200 with `present: false` and
 * its sentence, which names the asked block (the head when none was asked, where Hyperion prints "undefined").
 */
export async function hyperionAbiSnapshot(
  store: Pick<Store, 'abi' | 'position'>,
  abis: AbiCache,
  query: GetAbiSnapshotQuery,
): Promise<AbiSnapshot> {
  const head = (await store.position())?.head.blockNum ?? 0
  const blockNum = query.block ?? head
  const stored = await store.abi({ account: query.contract, blockNum })
  if (stored && stored.abi.length > 0) {
    if (!query.fetch) return { block_num: stored.blockNum, present: true }
    // An ABI the chain accepted but this decoder cannot read is answered as absent rather than as a 500.
    const compiled = abis.fromBinary(stored.abi)
    if (compiled.ok) return { block_num: stored.blockNum, abi: abiToJson(compiled.value.abi) }
  }
  return { block_num: null, present: false, error: `abi not found for ${query.contract} until block ${blockNum}` }
}
