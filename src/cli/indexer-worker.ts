import { parentPort, workerData } from 'node:worker_threads'
import { createIndexer } from '../ingest/index.ts'
import { openStore } from '../store/index.ts'

/** What the main thread hands the indexer worker. */
export interface IndexerWorkerData {
  readonly shipUrl: string
  readonly store: string
  readonly dataDir: string
  readonly startBlockNum: number
  /** Store only blocks at or below LIB (`--irreversible-only`). */
  readonly irreversibleOnly?: boolean
  /** Ask a Spring node for finality_data (`--fetch-finality-data`). */
  readonly fetchFinalityData?: boolean
}

/** What the worker reports: every callback of the indexer, then how it ended. */
export type IndexerWorkerMessage =
  | {
      type: 'block'
      block: { num: number; id: string; lib: number; head: number; actions: number; rowChanges: number }
    }
  | { type: 'fork'; fork: { blockNum: number; undone: number } }
  | { type: 'reader'; event: unknown }
  | { type: 'accepted'; node: { chainId: string | undefined; head: number; lib: number } }
  | { type: 'stopped' }
  | { type: 'failed'; message: string; code?: string; details?: Record<string, unknown> }

const port = parentPort!
const data = workerData as IndexerWorkerData
const post = (message: IndexerWorkerMessage) => port.postMessage(message)

// The indexer's own connection: its synchronous SQLite writes and its decoding run on this
// thread, never on the API's event loop.
const store = await openStore({ store: data.store, dataDir: data.dataDir })
const indexer = createIndexer({
  shipUrl: data.shipUrl,
  store,
  startBlockNum: data.startBlockNum,
  irreversibleOnly: data.irreversibleOnly ?? false,
  ...(data.fetchFinalityData ? { fetchFinalityData: true } : {}),
  reconnect: { minDelayMs: 250, maxDelayMs: 5000 },
  onBlock: (block) => post({ type: 'block', block }),
  onFork: (fork) => post({ type: 'fork', fork }),
  onReaderEvent: (event) => post({ type: 'reader', event: JSON.parse(JSON.stringify(event)) }),
  onNodeAccepted: (node) => post({ type: 'accepted', node }),
})
port.on('message', (message: { type: string }) => {
  if (message.type === 'stop') void indexer.stop()
})
try {
  await indexer.run()
  await store.close()
  post({ type: 'stopped' })
} catch (error) {
  await store.close().catch(() => undefined)
  // The code and details travel with the message, so the main thread logs the named error.
  const { code, details } = error as { code?: unknown; details?: unknown }
  post({
    type: 'failed',
    message: (error as Error).message,
    ...(typeof code === 'string' ? { code, details: details as Record<string, unknown> } : {}),
  })
}
