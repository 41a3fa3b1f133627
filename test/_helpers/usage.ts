import { portalFetch } from './portal.ts'

/** A key's usage by outcome, and the documents it was served (the portal's columns, /metrics' series). */
export interface KeyUsageCounts {
  ok: number
  clientErrors: number
  authFailures: number
  rateLimited: number
  documents: number
}

/** The `antler_key_*` series of one key on /metrics, by outcome, and its documents (0 for a series not there). */
export async function keyMetrics(base: string, keyId: string): Promise<KeyUsageCounts> {
  const text = await (await fetch(`${base}/metrics`)).text()
  const out: KeyUsageCounts = { ok: 0, clientErrors: 0, authFailures: 0, rateLimited: 0, documents: 0 }
  const requests = new RegExp(`^antler_key_requests_total\\{key_id="${keyId}",outcome="([a-zA-Z]+)"\\} (\\d+)$`, 'gm')
  for (const [, outcome, value] of text.matchAll(requests)) out[outcome as keyof KeyUsageCounts] = Number(value)
  const documents = new RegExp(`^antler_key_documents_total\\{key_id="${keyId}"\\} (\\d+)$`, 'm').exec(text)?.[1]
  out.documents = Number(documents ?? 0)
  return out
}

/** A key's usage as the portal shows it (its hourly rows summed, from the key's usage.json). */
export async function portalKeyUsage(base: string, cookie: string, keyId: string): Promise<KeyUsageCounts> {
  const json = (await portalFetch(base, `/portal/keys/${keyId}/usage.json`, { cookie })).text
  const hours = (JSON.parse(json) as { hours: Record<string, number>[] }).hours
  const sum = (field: string) => hours.reduce((total, h) => total + h[field], 0)
  return {
    ok: sum('ok'),
    clientErrors: sum('client_errors'),
    authFailures: sum('auth_failures'),
    rateLimited: sum('rate_limited'),
    documents: sum('documents'),
  }
}
