import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createApiKeyService, hashApiKey } from '../auth/index.ts'
import type { KeyStore } from '../store/index.ts'

/**
 * `antler dev`'s server key: created on first run and kept in the data dir (`dev-api-key`, mode
 * 0600) so later runs print the same key; a key revoked or missing from the store is replaced.
 */
export async function devApiKey(store: KeyStore, dataDir: string): Promise<string> {
  const file = join(dataDir, 'dev-api-key')
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim()
    const record = await store.apiKeyByHash(hashApiKey(key))
    if (record && record.revokedAtMs === undefined) return key
  }
  const { key } = await createApiKeyService({ store }).create({ type: 'server', name: 'antler dev' })
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(file, `${key}\n`, { mode: 0o600 })
  return key
}
