import { usageByWindow, type UsageTotals } from '../../accounts/index.ts'
import type { ApiKeyRecord, KeyUsageRecord } from '../../store/index.ts'
import { formatTime } from './views.ts'

/** How a key's state reads in the portal. */
export function keyState(key: ApiKeyRecord, nowMs: number): { state: string; stateClass: string; revoked: boolean } {
  if (key.revokedAtMs === undefined) return { state: 'active', stateClass: 'active', revoked: false }
  if (key.revokedAtMs > nowMs)
    return { state: `rotated: works until ${formatTime(key.revokedAtMs)}`, stateClass: 'grace', revoked: false }
  return { state: `revoked ${formatTime(key.revokedAtMs)}`, stateClass: 'revoked', revoked: true }
}

/** A key as the list and detail pages show it (never its string: the prefix only). */
export function keyRow(key: ApiKeyRecord, nowMs: number) {
  return {
    id: key.id,
    name: key.name,
    type: key.type,
    prefix: key.prefix ?? `${key.type}_????`,
    created: formatTime(key.createdAtMs),
    lastUsed: key.lastUsedAtMs === undefined ? 'never' : formatTime(key.lastUsedAtMs),
    ...keyState(key, nowMs),
  }
}

/** A usage table's rows: one per window. */
export function usageRows(rows: readonly KeyUsageRecord[], nowMs: number): ({ window: string } & UsageTotals)[] {
  return usageByWindow(rows, nowMs).map(({ window, totals }) => ({ window, ...totals }))
}
