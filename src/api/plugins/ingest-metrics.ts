import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge } from 'prom-client'
import type { HealthSource } from '../routes/health.ts'

/** What an indexer running in this process has done so far, and at what pace lately (`IngestMeter.snapshot()`). */
export interface IngestSnapshot {
  /** Blocks and action traces applied since the process started. */
  readonly blocks: number
  readonly actionTraces: number
  readonly rowChanges: number
  /** The node's head as the last applied block reported it; undefined before the first block. */
  readonly nodeHead: number | undefined
  /** Per second over the last few seconds (0 when nothing was applied in that window). */
  readonly blocksPerSecond: number
  readonly actionTracesPerSecond: number
  readonly rowChangesPerSecond: number
}

/** The in-process indexer's progress, read when `/metrics` is scraped. */
export interface IngestMeter {
  snapshot(): IngestSnapshot
}

export interface IngestMetricsOptions {
  readonly health: HealthSource
  /** Absent where no indexer runs in the process (`antler api`): only the store and chain gauges are exported. */
  readonly ingest?: IngestMeter
}

/**
 * Gauges of where the store stands against the chain (every API process: a replica's lag too) and, with an indexer
 * in the process, of its throughput: read at each scrape of `/metrics`, never polled in between.
 */
export const ingestMetricsPlugin = fp<IngestMetricsOptions>(async (app: FastifyInstance, options) => {
  const registers = [app.metrics.registry]
  const { health, ingest } = options
  const standing = standingReader(health, ingest)
  // prom-client reads the metrics of a scrape concurrently: each gauge awaits the scrape's one reading.
  const gauge = (name: string, help: string, read: (s: Standing) => number | undefined) =>
    new Gauge({
      name,
      help: `${help} (NaN while unknown)`,
      registers,
      async collect() {
        this.set(read(await standing()) ?? Number.NaN)
      },
    })
  gauge(
    'antler_chain_head_block',
    "The chain's head block number (its chain API, else the node the indexer follows)",
    (s) => s.chainHead,
  )
  gauge('antler_store_head_block', 'The last block the store holds', (s) => s.storeHead)
  gauge('antler_store_irreversible_block', 'The last irreversible block as the store knows it', (s) => s.storeLib)
  gauge(
    'antler_store_lag_blocks',
    "Blocks the store trails the chain's head by (what /readyz judges against --max-lag-blocks)",
    (s) => s.lag,
  )
  if (!ingest) return
  gauge('antler_ingest_eta_seconds', "Seconds to reach the chain's head at the recent pace", (s) => s.etaSeconds)
  // Each count as a pace over the last seconds (a gauge) and as a total since start (a counter).
  const counts: [string, string, (s: IngestSnapshot) => number, (s: IngestSnapshot) => number][] = [
    ['blocks', 'Blocks', (s) => s.blocksPerSecond, (s) => s.blocks],
    ['action_traces', 'Action traces', (s) => s.actionTracesPerSecond, (s) => s.actionTraces],
    ['row_changes', 'Table row changes', (s) => s.rowChangesPerSecond, (s) => s.rowChanges],
  ]
  for (const [what, label, pace, total] of counts) {
    new Gauge({
      name: `antler_ingest_${what}_per_second`,
      help: `${label} applied per second over the last seconds`,
      registers,
      collect() {
        this.set(pace(ingest.snapshot()))
      },
    })
    new Counter({
      name: `antler_ingest_${what}_total`,
      help: `${label} applied since the process started`,
      registers,
      collect() {
        this.reset()
        this.inc(total(ingest.snapshot()))
      },
    })
  }
})

/** Where the store stands against the chain at one scrape. */
interface Standing {
  readonly chainHead?: number
  readonly storeHead?: number
  readonly storeLib?: number
  readonly lag?: number
  readonly etaSeconds?: number
}

/** How long one reading serves the gauges of a scrape (they ask within a few milliseconds of each other). */
const READING_TTL_MS = 250

/** The store's position and the chain's head, read once per scrape however many gauges ask. */
function standingReader(health: HealthSource, ingest: IngestMeter | undefined): () => Promise<Standing> {
  let reading: { at: number; standing: Promise<Standing> } | undefined
  const read = async (): Promise<Standing> => {
    const [position, apiHead] = await Promise.all([
      health.store.position().catch(() => undefined),
      health.chainHead?.() ?? Promise.resolve(undefined),
    ])
    const pace = ingest?.snapshot()
    const chainHead = apiHead ?? pace?.nodeHead
    const storeHead = position?.head.blockNum
    const lag = chainHead !== undefined && storeHead !== undefined ? Math.max(0, chainHead - storeHead) : undefined
    const etaSeconds =
      lag === 0 ? 0 : lag !== undefined && pace && pace.blocksPerSecond > 0 ? lag / pace.blocksPerSecond : undefined
    return { chainHead, storeHead, storeLib: position?.lib, lag, etaSeconds }
  }
  return () => {
    if (!reading || Date.now() - reading.at > READING_TTL_MS) reading = { at: Date.now(), standing: read() }
    return reading.standing
  }
}
