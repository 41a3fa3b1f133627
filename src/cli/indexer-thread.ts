import { Worker } from 'node:worker_threads'
import type { ShipReaderEvent } from '../ship/index.ts'
import type { IndexerWorkerData, IndexerWorkerMessage } from './indexer-worker.ts'
import type { Logger } from './logger.ts'
import { indexerLogCallbacks } from './progress.ts'
import { createIngestMeter } from './ingest-meter.ts'
import type { IngestMeter } from '../api/index.ts'

/**
 * The worker's module: compiled (dist/), the worker runs indexer-worker.js; from the sources, a bootstrap that
 * registers tsx first, since a worker thread does not inherit the main thread's loader.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './indexer-worker-entry.mjs' : './indexer-worker.js',
  import.meta.url,
)

/** An indexer running on its own thread. */
export interface IndexerThread {
  /** The last block the indexer applied (the head it reported). */
  readonly lastBlock: () => { num: number; lib: number } | undefined
  /** Blocks, action traces and row changes applied, and at what pace lately (`/metrics`). */
  readonly meter: IngestMeter
  /** Whether a node passed the checks at connect (protocol, retained history, chain id) at least once. */
  readonly nodeAccepted: () => boolean
  /** The error the indexer stopped with; undefined while it runs. */
  readonly failure: () => { readonly code?: string; readonly message: string } | undefined
  /** Settles when the indexer ends: resolves after stop(), rejects when it failed. */
  readonly done: Promise<void>
  stop(): Promise<void>
}

/**
 * Runs the indexer in a worker thread with its own store connection, so ingest (decoding and
 * synchronous SQLite transactions) never stalls the API's event loop; progress, forks and SHiP
 * events come back as messages and are logged here. `onCommit` is called for each block and fork
 * message: the worker posts them once the write is committed (far below head, where blocks are
 * written in batches, a block may be reported just before its batch commits; the next one covers it).
 */
export function startIndexerThread(data: IndexerWorkerData, log: Logger, onCommit?: () => void): IndexerThread {
  const worker = new Worker(WORKER_URL, { workerData: data })
  const meter = createIngestMeter()
  const callbacks = indexerLogCallbacks(log, meter)
  let last: { num: number; lib: number } | undefined
  let accepted = false
  let failure: { code?: string; message: string } | undefined
  const done = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: IndexerWorkerMessage) => {
      switch (message.type) {
        case 'block':
          last = { num: message.block.num, lib: message.block.lib }
          onCommit?.()
          return callbacks.onBlock(message.block)
        case 'fork':
          onCommit?.()
          return callbacks.onFork(message.fork)
        case 'reader':
          return callbacks.onReaderEvent(message.event as ShipReaderEvent)
        case 'accepted':
          accepted = true
          return
        case 'stopped':
          return resolve()
        case 'failed':
          return reject(
            Object.assign(
              new Error(message.message),
              message.code ? { code: message.code, details: message.details } : {},
            ),
          )
      }
    })
    worker.on('error', reject)
    worker.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`the indexer thread exited with code ${code}`)),
    )
  })
  done.catch((error: unknown) => {
    const { code } = error as { code?: unknown }
    failure = { ...(typeof code === 'string' ? { code } : {}), message: (error as Error).message }
  })
  return {
    lastBlock: () => last,
    meter,
    nodeAccepted: () => accepted,
    failure: () => failure,
    done,
    async stop() {
      worker.postMessage({ type: 'stop' })
      await done.catch(() => undefined)
      // The worker's message port would keep its thread (and this process) alive once it stopped.
      await worker.terminate()
    },
  }
}
