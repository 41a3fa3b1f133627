import { BinaryReader, fromHex, readName, readPublicKey } from '../antelope/index.ts'
import type { BlockRecord } from '../store/index.ts'
import { hyperionTime } from './time.ts'

/** A producer schedule as Hyperion's block documents hold it (`new_producers`). */
export interface HyperionSchedule {
  version: number
  producers: { producer_name: string; block_signing_key: string }[]
}

/** One Hyperion block document (get_block, get_blocks). */
export interface HyperionBlockDocument {
  '@timestamp': string
  block_num: number
  block_id: string
  prev_id: string
  producer: string
  schedule_version: number
  /** The sum of the block's transaction receipts' CPU usage (µs). */
  cpu_usage: number
  /** The sum of the block's transaction receipts' NET usage (words). */
  net_usage: number
  /** The transaction receipts the block lists (the implicit onblock is not one). */
  trx_count: number
  new_producers?: HyperionSchedule
}

/** The header extension that announces a new producer schedule since protocol feature WTMSIG_BLOCK_SIGNATURES. */
const PRODUCER_SCHEDULE_CHANGE_EXTENSION = 1

/**
 * The schedule a block header announces: the legacy `new_producers` field, or the producer-schedule-change header
 * extension (a `producer_authority_schedule`: each producer with a block signing authority; the first key of the
 * authority is its `block_signing_key`, as Hyperion writes it). Undefined when the header announces none or was stored
 * without its details.
 */
export function announcedSchedule(block: BlockRecord): HyperionSchedule | undefined {
  const header = block.header
  if (!header) return undefined
  if (header.newProducers)
    return {
      version: header.newProducers.version,
      producers: header.newProducers.producers.map((p) => ({
        producer_name: p.producerName,
        block_signing_key: p.blockSigningKey,
      })),
    }
  const extension = header.headerExtensions.find((e) => e.type === PRODUCER_SCHEDULE_CHANGE_EXTENSION)
  if (!extension) return undefined
  try {
    return decodeAuthoritySchedule(fromHex(extension.data))
  } catch {
    // A header the chain accepted decodes; a store holding other bytes answers without the schedule.
    return undefined
  }
}

/** `producer_authority_schedule`: version, then producers each with a variant (v0: threshold and weighted keys). */
export function decodeAuthoritySchedule(bytes: Uint8Array): HyperionSchedule {
  const r = new BinaryReader(bytes)
  const version = r.uint32()
  const producers: HyperionSchedule['producers'] = []
  for (let i = r.varuint32(); i > 0; i--) {
    const producerName = readName(r)
    const variant = r.varuint32()
    if (variant !== 0) throw new RangeError(`unknown block signing authority ${variant}`)
    r.uint32() // threshold
    const keys: string[] = []
    for (let k = r.varuint32(); k > 0; k--) {
      keys.push(readPublicKey(r))
      r.uint16() // weight
    }
    producers.push({ producer_name: producerName, block_signing_key: keys[0] ?? '' })
  }
  return { version, producers }
}

/** Hyperion's document of a stored block with its transaction receipts' count and usage. */
export function blockDocument(
  block: BlockRecord,
  receipts: { receiptCount: number; cpuUsageUs: number; netUsageWords: number },
) {
  const doc: HyperionBlockDocument = {
    '@timestamp': hyperionTime(block.timestampMs),
    block_num: block.num,
    block_id: block.id,
    prev_id: block.previous,
    producer: block.producer,
    schedule_version: block.header?.scheduleVersion ?? 0,
    cpu_usage: receipts.cpuUsageUs,
    net_usage: receipts.netUsageWords,
    trx_count: receipts.receiptCount,
  }
  const schedule = announcedSchedule(block)
  if (schedule) doc.new_producers = schedule
  return doc
}
