import { sha256, toHex, type DecodeResult } from '../antelope/index.ts'
import type { ActionRecord } from '../store/index.ts'

/** Top-level action data fields indexed as `data.<field>` (dfuse's list, reference/dfuse-wire.md §7.2). */
export const SEARCH_DATA_FIELDS: ReadonlySet<string> = new Set([
  'account', 'active', 'active_key', 'actor', 'amount', 'auth', 'authority', 'bid', 'bidder', 'canceler', 'creator', 'executer', 'from', 'is_active',
  'is_priv', 'isproxy', 'issuer', 'level', 'location', 'maximum_supply', 'name', 'newname', 'owner', 'parent', 'payer', 'permission', 'producer',
  'producer_key', 'proposal_name', 'proposal_hash', 'proposer', 'proxy', 'public_key', 'producers', 'quant', 'quantity', 'ram_payer', 'receiver',
  'requested', 'requirement', 'symbol', 'threshold', 'to', 'transfer', 'voter', 'voter_name', 'weight',
])

/** Terms longer than this are not indexed (a memo-sized value is not a search key). */
export const MAX_TERM_LENGTH = 128
/** Values nested deeper than this inside a data field are not indexed. */
const MAX_DATA_DEPTH = 4

function addDataTerms(terms: Set<string>, path: string, value: unknown, depth: number): void {
  if (value === null || value === undefined || depth > MAX_DATA_DEPTH) return
  if (Array.isArray(value)) {
    for (const item of value) addDataTerms(terms, path, item, depth + 1)
    return
  }
  if (typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) addDataTerms(terms, `${path}.${key}`, inner, depth + 1)
    return
  }
  const term = `${path}:${String(value)}`
  if (term.length <= MAX_TERM_LENGTH) terms.add(term)
}

/**
 * The `data.*` terms of an action's data decoded with the ABI in force (`decoded`, undefined when
 * there is none or it failed). Notifications carry the same data, so ingest computes these once
 * per distinct action and reuses them for each receiver.
 */
export function dataSearchTerms(action: Pick<ActionRecord, 'account' | 'name'>, decoded: DecodeResult | undefined): string[] {
  if (!decoded?.ok || !decoded.value || typeof decoded.value !== 'object') return []
  const terms = new Set<string>()
  const data = decoded.value as Record<string, unknown>
  for (const [field, value] of Object.entries(data)) if (SEARCH_DATA_FIELDS.has(field)) addDataTerms(terms, `data.${field}`, value, 0)
  // setabi/setcode: the payload is indexed by its hash, as dfuse did.
  if (action.account === 'eosio' && (action.name === 'setabi' || action.name === 'setcode')) {
    const field = action.name === 'setabi' ? 'abi' : 'code'
    const payload = data[field]
    if (typeof payload === 'string' && /^[0-9a-f]*$/.test(payload)) terms.add(`data.${field}:${toHex(sha256(Buffer.from(payload, 'hex')))}`)
  }
  return [...terms]
}

/**
 * The search terms of an executed action: receiver, account, action, auth (actor and
 * actor@permission), ram.consumed/ram.released, and its `dataTerms` (dataSearchTerms). `input`,
 * `notif` and `scheduled` are flags on every posting, not terms.
 */
export function actionSearchTerms(action: ActionRecord, dataTerms: readonly string[]): string[] {
  const terms = new Set<string>([`receiver:${action.receiver}`, `account:${action.account}`, `action:${action.name}`])
  for (const level of action.authorization) {
    terms.add(`auth:${level.actor}`)
    terms.add(`auth:${level.actor}@${level.permission}`)
  }
  for (const d of action.ramDeltas) {
    if (d.delta > 0n) terms.add(`ram.consumed:${d.account}`)
    else if (d.delta < 0n) terms.add(`ram.released:${d.account}`)
  }
  for (const term of dataTerms) terms.add(term)
  return [...terms]
}
