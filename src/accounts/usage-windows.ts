import type { KeyUsageRecord } from '../store/index.ts'

const HOUR_MS = 3_600_000

/** The windows the portal shows usage over. */
export const USAGE_WINDOWS = [
  { label: '24 h', hours: 24 },
  { label: '7 d', hours: 24 * 7 },
  { label: '30 d', hours: 24 * 30 },
] as const

/** The longest window: how far back one read goes. */
export const USAGE_HISTORY_MS = USAGE_WINDOWS[USAGE_WINDOWS.length - 1].hours * HOUR_MS

/** Counts of one window (or one key's whole history) by outcome. */
export interface UsageTotals {
  ok: number
  clientErrors: number
  authFailures: number
  rateLimited: number
  documents: number
}

const zero = (): UsageTotals => ({ ok: 0, clientErrors: 0, authFailures: 0, rateLimited: 0, documents: 0 })

/** The hour a time falls in (its start). */
export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS

/**
 * One key's hourly rows summed over each window ending now (the current hour included): the window of N hours holds
 * the rows of the last N hours, the current one counting as the first.
 */
export function usageByWindow(
  rows: readonly KeyUsageRecord[],
  nowMs: number,
): { window: string; totals: UsageTotals }[] {
  const current = hourOf(nowMs)
  return USAGE_WINDOWS.map(({ label, hours }) => {
    const since = current - (hours - 1) * HOUR_MS
    const totals = zero()
    for (const row of rows) {
      if (row.hourMs < since) continue
      totals.ok += row.ok
      totals.clientErrors += row.clientErrors
      totals.authFailures += row.authFailures
      totals.rateLimited += row.rateLimited
      totals.documents += row.documents
    }
    return { window: label, totals }
  })
}

/** Rows of many keys (one read) grouped by key. */
export function rowsByKey(rows: readonly KeyUsageRecord[]): Map<string, KeyUsageRecord[]> {
  const byKey = new Map<string, KeyUsageRecord[]>()
  for (const row of rows) {
    const list = byKey.get(row.keyId)
    if (list) list.push(row)
    else byKey.set(row.keyId, [row])
  }
  return byKey
}
