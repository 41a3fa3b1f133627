import { firstStoredBlock } from '../state/index.ts'
import type { Store } from '../store/index.ts'
import { hyperionTime } from './time.ts'

/** One entry of `/v2/health`'s `health[]`, in Hyperion's field names (`time` too: wharfkit's client requires it). */
export interface HealthEntry {
  readonly service: string
  readonly status: 'OK' | 'Warning' | 'Error'
  readonly time: number
  readonly service_data?: Record<string, unknown>
}

/** What nodeos's get_info says, as far as health needs it. */
interface ChainInfo {
  readonly head_block_num: number
  readonly head_block_time: string
  readonly last_irreversible_block_num: number
  readonly chain_id: string
}

/** The indexer is called behind when its last block is older than this (a stalled SHiP feed or a stopped chain). */
export const STALE_INDEX_MS = 60_000

async function chainInfo(chainApi: string, timeoutMs: number): Promise<ChainInfo> {
  const response = await fetch(`${chainApi}/v1/chain/get_info`, {
    method: 'POST',
    signal: AbortSignal.timeout(timeoutMs),
  })
  if (!response.ok) throw new Error(`get_info answered ${response.status}`)
  return (await response.json()) as ChainInfo
}

/** The chain node (Hyperion's `NodeosRPC`): its head, LIB and how far its head block is behind now. */
async function nodeosEntry(chainApi: string | undefined, timeoutMs: number, now: number): Promise<HealthEntry> {
  if (!chainApi) return { service: 'NodeosRPC', status: 'Error', time: now, service_data: { error: 'no chain API' } }
  try {
    const info = await chainInfo(chainApi, timeoutMs)
    const headTime = Date.parse(`${info.head_block_time}Z`)
    return {
      service: 'NodeosRPC',
      status: 'OK',
      time: now,
      service_data: {
        head_block_num: info.head_block_num,
        head_block_time: info.head_block_time,
        time_offset: now - headTime,
        last_irreversible_block: info.last_irreversible_block_num,
        chain_id: info.chain_id,
      },
    }
  } catch (error) {
    return { service: 'NodeosRPC', status: 'Error', time: now, service_data: { error: (error as Error).message } }
  }
}

/**
 * The store (in Hyperion's place for Elasticsearch, with the same `service_data` fields) and the state-history feed
 * as the store shows it: the blocks it holds (contiguous by construction: ingest refuses a block that does not link
 * to the head, so `missing_blocks` is 0 whenever the store opened), and whether its last block is recent.
 */
async function storeEntries(
  store: Pick<Store, 'position' | 'blockByNum'>,
  chainHead: number | undefined,
  now: number,
): Promise<HealthEntry[]> {
  const position = await store.position()
  const firstBlock = position ? await firstStoredBlock(store, position.head.blockNum) : undefined
  if (!position || firstBlock === undefined)
    return [
      { service: 'Store', status: 'Warning', time: now, service_data: { last_indexed_block: 0 } },
      { service: 'StateHistory', status: 'Warning', time: now },
    ]
  const head = position.head.blockNum
  const headBlock = await store.blockByNum(head)
  const behindMs = headBlock ? now - headBlock.timestampMs : Infinity
  const total = head - firstBlock + 1
  return [
    {
      service: 'Store',
      status: 'OK',
      time: now,
      service_data: {
        active_shards: '100.0%',
        head_offset: chainHead === undefined ? null : chainHead - head,
        first_indexed_block: firstBlock,
        last_indexed_block: head,
        total_indexed_blocks: total,
        missing_blocks: 0,
        missing_pct: '0.00%',
        last_irreversible_block: position.lib,
      },
    },
    {
      service: 'StateHistory',
      status: behindMs <= STALE_INDEX_MS ? 'OK' : 'Warning',
      time: now,
      service_data: {
        last_block_time: headBlock ? hyperionTime(headBlock.timestampMs) : null,
        behind_ms: Number.isFinite(behindMs) ? behindMs : null,
      },
    },
  ]
}

/** `/v2/health`'s `health[]`: the services Antler has — the chain node, the store, the state-history feed. */
export async function healthEntries(args: {
  store: Pick<Store, 'position' | 'blockByNum'>
  chainApi: string | undefined
  chainTimeoutMs: number
  now?: number
}): Promise<HealthEntry[]> {
  const now = args.now ?? Date.now()
  const nodeos = await nodeosEntry(args.chainApi, Math.min(args.chainTimeoutMs, 2000), now)
  const chainHead = nodeos.service_data?.head_block_num as number | undefined
  return [nodeos, ...(await storeEntries(args.store, chainHead, now))]
}
