import { createFailureLog, type FailureLogger } from '../antelope/index.ts'
import type { KeyStore } from '../store/index.ts'

/** The revoked key ids of the store, refreshed in the background so that checking one costs a set lookup. */
export interface RevocationWatch {
  isRevoked(keyId: string): boolean
  /** Reads the store now (a revoke by this process, or a test, need not wait for the next tick). */
  refresh(): Promise<void>
  close(): void
}

/**
 * Polls `revokedApiKeyIds(now)` every `intervalMs` (1 s by default): a key revoked by `antler keys
 * revoke` in another process, or through another replica, is refused within that interval. A
 * failed read keeps the last known set (the store may be restarting) and is logged as every background loop's is
 * (createFailureLog: the first failure in full, repeats counted, the recovery noted).
 */
export async function createRevocationWatch(deps: {
  store: Pick<KeyStore, 'revokedApiKeyIds'>
  intervalMs?: number
  log?: FailureLogger
}): Promise<RevocationWatch> {
  let revoked = new Set(await deps.store.revokedApiKeyIds(Date.now()))
  const failures = createFailureLog({ log: deps.log, label: 'revocation refresh' })
  const refresh = async () => {
    revoked = new Set(await deps.store.revokedApiKeyIds(Date.now()))
  }
  const tick = async () => {
    try {
      await refresh()
      failures.recovered()
    } catch (error) {
      failures.failed(error)
    }
  }
  const timer = setInterval(() => void tick(), deps.intervalMs ?? 1000)
  timer.unref()
  return {
    isRevoked: (id) => revoked.has(id),
    refresh,
    close: () => {
      clearInterval(timer)
      failures.close()
    },
  }
}
