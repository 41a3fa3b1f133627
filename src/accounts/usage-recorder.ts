import { createFailureLog, type FailureLogger } from '../antelope/index.ts'
import type { KeyStore, KeyUsageRecord, PortalStore } from '../store/index.ts'
import { hourOf } from './usage-windows.ts'

/** What a request counts as in a key's usage. */
export type UsageOutcome = 'ok' | 'clientErrors' | 'authFailures' | 'rateLimited'

/** How often counts and last-used times are written to the store. */
const FLUSH_INTERVAL_MS = 2_000

/**
 * Per-key usage and last use, counted in memory and added to the store every 2 s (one write of all keys' rows, one
 * of their last-used times), so a request costs a map update, not a write. Rows are added, never replaced: replicas
 * each add their own counts. A failed write keeps the counts for the next one.
 */
export interface UsageRecorder {
  /** Counts one request of a key (documents: what it served, 0 for a refusal). */
  count(keyId: string, outcome: UsageOutcome, documents: number): void
  /** Counts documents a key's open stream, subscription or webhook sent after its request was counted. */
  documents(keyId: string, documents: number): void
  /** Notes a use of the key (a token issued, a call admitted). */
  used(keyId: string): void
  /** Writes what is pending now (tests, shutdown). */
  flush(): Promise<void>
  close(): Promise<void>
}

type Counts = { -readonly [K in keyof KeyUsageRecord]: KeyUsageRecord[K] }

export function createUsageRecorder(deps: {
  store: Pick<PortalStore, 'addKeyUsage'> & Pick<KeyStore, 'touchApiKeys'>
  now?: () => number
  intervalMs?: number
  /** Where failed writes are logged: the first of a kind in full, repeats (every 2 s) as a count. */
  log?: FailureLogger
}): UsageRecorder {
  const now = deps.now ?? Date.now
  const writeFailures = createFailureLog({ log: deps.log, label: 'usage: writing key usage' })
  let pending = new Map<string, Counts>()
  let lastUse = new Map<string, number>()
  let flushing: Promise<void> = Promise.resolve()

  async function write(rows: Map<string, Counts>, uses: Map<string, number>): Promise<void> {
    let failed = false
    try {
      if (rows.size > 0) await deps.store.addKeyUsage([...rows.values()])
    } catch (error) {
      // Kept for the next write: counts are added, so nothing is counted twice or lost.
      for (const row of rows.values()) merge(row)
      failed = true
      writeFailures.failed(error)
    }
    try {
      if (uses.size > 0) await deps.store.touchApiKeys([...uses].map(([id, atMs]) => ({ id, atMs })))
    } catch (error) {
      for (const [id, atMs] of uses) lastUse.set(id, Math.max(atMs, lastUse.get(id) ?? 0))
      failed = true
      writeFailures.failed(error)
    }
    // A flush with nothing to write proves nothing about the store.
    if (!failed && (rows.size > 0 || uses.size > 0)) writeFailures.recovered()
  }

  function merge(row: Counts): void {
    const key = `${row.keyId}|${row.hourMs}`
    const kept = pending.get(key)
    if (!kept) return void pending.set(key, { ...row })
    kept.ok += row.ok
    kept.clientErrors += row.clientErrors
    kept.authFailures += row.authFailures
    kept.rateLimited += row.rateLimited
    kept.documents += row.documents
  }

  function flush(): Promise<void> {
    const rows = pending
    const uses = lastUse
    pending = new Map()
    lastUse = new Map()
    flushing = flushing.then(() => write(rows, uses))
    return flushing
  }

  /** The pending row of a key for the current hour. */
  function rowOf(keyId: string): Counts {
    const hourMs = hourOf(now())
    const key = `${keyId}|${hourMs}`
    let row = pending.get(key)
    if (!row) {
      row = { keyId, hourMs, ok: 0, clientErrors: 0, authFailures: 0, rateLimited: 0, documents: 0 }
      pending.set(key, row)
    }
    return row
  }

  const timer = setInterval(() => void flush(), deps.intervalMs ?? FLUSH_INTERVAL_MS)
  timer.unref()

  return {
    count(keyId, outcome, documents) {
      const row = rowOf(keyId)
      row[outcome]++
      row.documents += documents
    },
    documents(keyId, documents) {
      rowOf(keyId).documents += documents
    },
    used(keyId) {
      lastUse.set(keyId, now())
    },
    flush,
    async close() {
      clearInterval(timer)
      await flush()
      writeFailures.close()
    },
  }
}
