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
 * failed read keeps the last known set (the store may be restarting) and is reported.
 */
export async function createRevocationWatch(deps: {
  store: Pick<KeyStore, 'revokedApiKeyIds'>
  intervalMs?: number
  onError?: (error: unknown) => void
}): Promise<RevocationWatch> {
  let revoked = new Set(await deps.store.revokedApiKeyIds(Date.now()))
  const refresh = async () => {
    revoked = new Set(await deps.store.revokedApiKeyIds(Date.now()))
  }
  const timer = setInterval(() => refresh().catch((error: unknown) => deps.onError?.(error)), deps.intervalMs ?? 1000)
  timer.unref()
  return { isRevoked: (id) => revoked.has(id), refresh, close: () => clearInterval(timer) }
}
