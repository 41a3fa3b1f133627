import { PublicKey } from '@wharfkit/antelope'
import type { BlockRecord, Store } from '../store/index.ts'
import { announcedSchedule, type HyperionSchedule } from './block-documents.ts'
import { HyperionNotFoundError } from './errors.ts'
import { hyperionTime } from './time.ts'

/**
 * get_schedule from the stored block headers. Blocks are indexed by number only, so a schedule is found through the
 * header's `schedule_version`, which never decreases along the chain: the first block produced under version V is
 * found by bisection, and the block that announced V (legacy `new_producers`, or the schedule-change header extension)
 * by a bounded walk back from it (a schedule activates once its announcing block is irreversible, a few hundred
 * blocks later at most). A schedule announced but not active yet is found by walking back from the head.
 *
 * Savanna headers carry a fixed schedule_version and announce producers through the finality extension's proposer
 * policies, which are not read here: under Savanna this answers the last schedule of the legacy consensus.
 */

/** Header schedule_version under Savanna (a flag value, not a version). */
const SAVANNA_SCHEDULE_VERSION = 0x80000000
/** How far back from an activation (or from the head) the announcing block is looked for. */
export const MAX_ANNOUNCEMENT_WALK = 10_000
/** How many versions a `producer` / `key` filter looks through, newest first. */
export const MAX_VERSIONS_SEARCHED = 20
const WALK_PAGE = 500

export interface GetScheduleQuery {
  mode?: string
  version?: number
  producer?: string
  key?: string
}

export interface ScheduleProducer {
  producer_name: string
  block_signing_key: string
  legacy_key: string
}

export interface ScheduleAnswer {
  timestamp: string
  /** activated: the first block produced under the schedule. */
  block_num?: number
  /** proposed: the block whose header announced the schedule. */
  proposed_block_num?: number
  version: number
  producers: ScheduleProducer[]
}

type Reads = Pick<Store, 'blockByNum' | 'blockPage' | 'position'>

export async function hyperionSchedule(store: Reads, query: GetScheduleQuery): Promise<ScheduleAnswer> {
  const position = await store.position()
  const head = position?.head.blockNum ?? 0
  // A schedule announced but not active yet was announced above LIB (it activates once its block is irreversible).
  const pendingFloor = Math.max(position?.lib ?? 0, head - MAX_ANNOUNCEMENT_WALK) + 1
  const headBlock = head > 0 ? await store.blockByNum(head) : undefined
  const activeVersion = versionOf(headBlock)
  if (activeVersion === undefined) throw HyperionNotFoundError('schedule not found')
  const wanted = (s: HyperionSchedule) =>
    (query.producer === undefined || s.producers.some((p) => p.producer_name === query.producer)) &&
    (query.key === undefined || s.producers.some((p) => sameKey(p.block_signing_key, query.key as string)))

  const candidates: number[] = []
  if (query.version !== undefined) candidates.push(query.version)
  else {
    const pending = await announcementIn(store, head, pendingFloor, (s) => s.version > activeVersion)
    if (pending && query.mode !== 'activated') candidates.push(pending.schedule.version)
    for (let v = activeVersion; v >= 0 && candidates.length < MAX_VERSIONS_SEARCHED; v--) candidates.push(v)
  }
  for (const version of candidates) {
    const found = await scheduleOf(store, { head, pendingFloor }, version, activeVersion)
    if (!found || !wanted(found.schedule)) continue
    if (query.mode === 'activated') {
      if (!found.activation) continue
      return answer(found.schedule, found.activation, { block_num: found.activation.num })
    }
    return answer(found.schedule, found.announcement, { proposed_block_num: found.announcement.num })
  }
  throw HyperionNotFoundError('schedule not found')
}

function answer(schedule: HyperionSchedule, block: BlockRecord, at: Partial<ScheduleAnswer>): ScheduleAnswer {
  return {
    timestamp: hyperionTime(block.timestampMs),
    ...at,
    version: schedule.version,
    producers: schedule.producers.map((p) => ({ ...p, legacy_key: legacyKey(p.block_signing_key) })),
  }
}

/** A schedule version's announcement and, once active, the first block produced under it. */
async function scheduleOf(
  store: Reads,
  { head, pendingFloor }: { head: number; pendingFloor: number },
  version: number,
  activeVersion: number,
): Promise<{ schedule: HyperionSchedule; announcement: BlockRecord; activation?: BlockRecord } | undefined> {
  if (version > activeVersion) {
    const pending = await announcementIn(store, head, pendingFloor, (s) => s.version === version)
    return pending && { schedule: pending.schedule, announcement: pending.block }
  }
  const activation = await firstBlockWithVersion(store, head, version)
  if (!activation) return undefined
  const from = activation.num - 1
  const announced = await announcementIn(store, from, from - MAX_ANNOUNCEMENT_WALK + 1, (s) => s.version === version)
  // Version 0 (genesis) and a store started after the announcement: the schedule is not in the headers kept.
  return announced && { schedule: announced.schedule, announcement: announced.block, activation }
}

/** The first stored block whose header's schedule_version is `version` (bisection on the non-decreasing version). */
async function firstBlockWithVersion(store: Reads, head: number, version: number): Promise<BlockRecord | undefined> {
  const [first] = await store.blockPage({ fromBlock: 1, toBlock: head }, { descending: false, skip: 0, limit: 1 })
  if (!first) return undefined
  let low = first.block.num
  let high = head
  let found: BlockRecord | undefined
  while (low <= high) {
    const mid = Math.floor((low + high) / 2)
    const block = await store.blockByNum(mid)
    const v = versionOf(block)
    if (block === undefined) {
      low = mid + 1 // a gap (never below the first stored block on an unpruned store): look later
      continue
    }
    if (v === undefined || v >= version) {
      if (v === version) found = block
      high = mid - 1
    } else low = mid + 1
  }
  return found
}

/** The newest block in [floor, from] announcing a schedule that `match`es. */
async function announcementIn(
  store: Reads,
  from: number,
  floor: number,
  match: (schedule: HyperionSchedule) => boolean,
): Promise<{ schedule: HyperionSchedule; block: BlockRecord } | undefined> {
  const lowest = Math.max(1, floor)
  for (let to = from; to >= lowest; to -= WALK_PAGE) {
    const page = await store.blockPage(
      { fromBlock: Math.max(lowest, to - WALK_PAGE + 1), toBlock: to },
      { descending: true, skip: 0, limit: WALK_PAGE },
    )
    for (const { block } of page) {
      const schedule = announcedSchedule(block)
      if (schedule && match(schedule)) return { schedule, block }
    }
  }
  return undefined
}

/** A header's schedule version; undefined without header details or under Savanna. */
function versionOf(block: BlockRecord | undefined): number | undefined {
  const v = block?.header?.scheduleVersion
  return v === undefined || v === SAVANNA_SCHEDULE_VERSION ? undefined : v
}

function legacyKey(key: string): string {
  try {
    return PublicKey.from(key).toLegacyString()
  } catch {
    return key
  }
}

function sameKey(a: string, b: string): boolean {
  try {
    return PublicKey.from(a).equals(PublicKey.from(b))
  } catch {
    return a === b
  }
}
