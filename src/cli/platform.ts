import { errorDefinitions } from '../antelope/index.ts'
import { createLiveHub } from '../live/index.ts'
import type { Store } from '../store/index.ts'
import type { ApiFlags } from './api-options.ts'
import { startApi, type RunningApi } from './api-runtime.ts'
import { startIndexerThread, type IndexerThread } from './indexer-thread.ts'
import type { Logger } from './logger.ts'

/** The store kind a `--store` value names. */
export const storeKind = (store: string): 'sqlite' | 'postgres' => (store === 'sqlite' ? 'sqlite' : 'postgres')

/** Indexer (own thread) + API on one store: what `dev` and `serve` run. */
export async function startPlatform(args: {
  flags: ApiFlags & { host: string; store: string; dataDir: string }
  store: Store
  ship: string
  chainApi: string
  startBlockNum: number
  irreversibleOnly?: boolean
  fetchFinalityData?: boolean
  log: Logger
}): Promise<{ api: RunningApi; indexer: IndexerThread }> {
  const { flags, log } = args
  // The API's live hub learns of new steps from the indexer thread's messages: no polling.
  const live = createLiveHub({ source: args.store, pollIntervalMs: 0, log })
  const indexer = startIndexerThread(
    {
      shipUrl: args.ship,
      store: flags.store,
      dataDir: flags.dataDir,
      startBlockNum: args.startBlockNum,
      irreversibleOnly: args.irreversibleOnly,
      fetchFinalityData: args.fetchFinalityData,
    },
    log,
    () => live.notify(),
  )
  indexer.done.catch((error: unknown) => {
    log.fatal({ err: error }, 'indexer stopped')
    if (!keepsServing(error, indexer)) process.exit(1)
    log.error('the API keeps serving the store as it stands; /readyz fails (503) with the indexer error')
  })
  const api = await startApi({
    flags,
    host: flags.host,
    store: args.store,
    storeKind: storeKind(flags.store),
    chainApi: args.chainApi,
    logger: log,
    live,
    indexerFailure: indexer.failure,
    ingest: indexer.meter,
    setupTokenDir: flags.dataDir,
  })
  return { api, indexer }
}

/** Codes a restart would meet again (the registry calls them not retryable). */
const REFUSALS: ReadonlySet<string> = new Set(
  errorDefinitions().flatMap(([code, definition]) => (definition.retryable ? [] : [code])),
)

/**
 * Whether the process outlives its stopped indexer: only once it has applied a block (a failure at start ends the
 * process, so `antler dev` on another chain's store exits 1 at once) and only for a named refusal a restart would
 * meet again (another history, a protocol or history-gap error): the API then serves what is stored and `/readyz`
 * reports the error. Anything else (a lost database) exits 1, for a supervisor to restart.
 */
function keepsServing(error: unknown, indexer: IndexerThread): boolean {
  const code = (error as { code?: unknown }).code
  return indexer.lastBlock() !== undefined && typeof code === 'string' && REFUSALS.has(code)
}

/** Logs a status line every `everyMs`: head, LIB, blocks/s and requests/s. */
export function logStatus(
  log: Logger,
  source: { head: () => { num: number; lib: number } | undefined; requests: () => number },
  everyMs = 10_000,
): () => void {
  let last = { at: Date.now(), head: source.head()?.num ?? 0, requests: source.requests() }
  const timer = setInterval(() => {
    const now = { at: Date.now(), head: source.head()?.num ?? 0, requests: source.requests() }
    const seconds = (now.at - last.at) / 1000
    log.info(
      {
        head: now.head,
        lib: source.head()?.lib ?? 0,
        blocks_per_s: Math.round(((now.head - last.head) / seconds) * 10) / 10,
        requests_per_s: Math.round(((now.requests - last.requests) / seconds) * 10) / 10,
      },
      'status',
    )
    last = now
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
