import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** How often the background thread copies new WAL frames into the database file. */
const CHECKPOINT_INTERVAL_MS = 200

/**
 * Plain JavaScript evaluated in the worker, so it runs whatever loader the main thread uses (compiled dist/, or the
 * TypeScript sources through tsx, which workers do not inherit) and needs no file of its own in dist/. PASSIVE never
 * waits for or blocks the writer; it copies the frames committed so far, and the writer restarts the WAL from its start
 * at its next transaction once everything is copied.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.path)
db.pragma('busy_timeout = 0')
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)') } catch { /* busy or closing: the next tick retries */ }
}, workerData.intervalMs)
parentPort.on('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

export interface Checkpointer {
  stop(): Promise<void>
}

/**
 * Runs WAL checkpoints of the SQLite file at `path` on a second thread, so the copy of written
 * pages into the database file (and its fsync) overlaps the writer instead of stalling its commits.
 */
export function startCheckpointer(path: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path, driver, intervalMs: CHECKPOINT_INTERVAL_MS },
  })
  worker.unref()
  // A checkpoint that fails is retried by the writer's own fallback checkpoints; never fatal.
  worker.on('error', () => undefined)
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  return {
    async stop() {
      // Held only while stopping: the process waits for the thread to close its connection.
      worker.ref()
      worker.postMessage('stop')
      await exited
    },
  }
}
