import { bigIntToName, sha256, toHex, type DecodeResult } from '../../antelope/index.ts'
import type { ActionRecord, DeferredCreation, RowChangeRecord } from '../types.ts'

/**
 * Search terms (docs/ARCHITECTURE.md, Search postings): what ingest indexes for each executed
 * action, and what the query side recomputes to confirm a match. Kept here, in the store, so both
 * may import it.
 */

/**
 * Top-level action data fields indexed as `data.<field>`: the whitelist dfuse's EOSIO search indexes, which the
 * dfuse query language's users expect (nested objects addressable with dots, arrays flattened).
 */
export const SEARCH_DATA_FIELDS: ReadonlySet<string> = new Set([
  'account',
  'active',
  'active_key',
  'actor',
  'amount',
  'auth',
  'authority',
  'bid',
  'bidder',
  'canceler',
  'creator',
  'executer',
  'from',
  'is_active',
  'is_priv',
  'isproxy',
  'issuer',
  'level',
  'location',
  'maximum_supply',
  'name',
  'newname',
  'owner',
  'parent',
  'payer',
  'permission',
  'producer',
  'producer_key',
  'proposal_name',
  'proposal_hash',
  'proposer',
  'proxy',
  'public_key',
  'producers',
  'quant',
  'quantity',
  'ram_payer',
  'receiver',
  'requested',
  'requirement',
  'symbol',
  'threshold',
  'to',
  'transfer',
  'voter',
  'voter_name',
  'weight',
])

/**
 * The field answered from the transactions table, not from postings: a transaction's actions are
 * one global-sequence span per stored execution, so `trx_id:<id>` costs an id lookup and no
 * posting list of its own (a list per transaction was a chunk row per transaction per write: a
 * third of the index's bytes).
 */
export const TRX_ID_PREFIX = 'trx_id:'

/** Terms longer than this are not indexed (a memo-sized value is not a search key). */
export const MAX_TERM_LENGTH = 128
/** Values nested deeper than this inside a data field are not indexed. */
const MAX_DATA_DEPTH = 4
/**
 * Row terms one contract may spread over its actions of one block: (actions whose receiver is the
 * contract) × (distinct `db.table:<table>/<scope>` and `db.key` terms of its rows). Above it the
 * block is busy and attributing every row to every action would cost postings quadratic in its
 * size, so a row's scoped terms go only to the actions that name its scope or payer (see
 * `blockSearchTerms`).
 */
export const MAX_ROW_POSTINGS_PER_CONTRACT = 4096

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
export function dataSearchTerms(
  action: Pick<ActionRecord, 'account' | 'name'>,
  decoded: DecodeResult | undefined,
): string[] {
  if (!decoded?.ok || !decoded.value || typeof decoded.value !== 'object') return []
  const terms = new Set<string>()
  const data = decoded.value as Record<string, unknown>
  for (const [field, value] of Object.entries(data))
    if (SEARCH_DATA_FIELDS.has(field)) addDataTerms(terms, `data.${field}`, value, 0)
  // setabi/setcode: the payload is indexed by its hash, as dfuse did.
  if (action.account === 'eosio' && (action.name === 'setabi' || action.name === 'setcode')) {
    const field = action.name === 'setabi' ? 'abi' : 'code'
    const payload = data[field]
    if (typeof payload === 'string' && /^[0-9a-f]*$/.test(payload))
      terms.add(`data.${field}:${toHex(sha256(Buffer.from(payload, 'hex')))}`)
  }
  return [...terms]
}

/** What an action's terms depend on beyond the action itself: its place in the block. */
export interface ActionTermContext {
  /** The action that created this one (same transaction, action ordinal = its creator ordinal), if stored. */
  readonly parent?: Pick<ActionRecord, 'receiver' | 'account' | 'name'>
  /** `db.table` and `db.key` terms of the block's row changes attributed to this action. */
  readonly rowTerms?: readonly string[]
  /** The account that created the deferred transaction this action runs in (`creator:`). */
  readonly creator?: string
}

/**
 * The search terms of an executed action: receiver, account, action, auth (actor and
 * actor@permission), ram.consumed/ram.released, its `dataTerms` (dataSearchTerms) and
 * what `context` adds (parent.*, db.*; see `blockTermContexts`). `input`, `notif` and `scheduled`
 * are flags on every posting, not terms.
 */
export function actionSearchTerms(
  action: ActionRecord,
  dataTerms: readonly string[],
  context?: ActionTermContext,
): string[] {
  const terms = new Set<string>([`receiver:${action.receiver}`, `account:${action.account}`, `action:${action.name}`])
  for (const level of action.authorization) {
    terms.add(`auth:${level.actor}`)
    terms.add(`auth:${level.actor}@${level.permission}`)
  }
  for (const d of action.ramDeltas) {
    if (d.delta > 0n) terms.add(`ram.consumed:${d.account}`)
    else if (d.delta < 0n) terms.add(`ram.released:${d.account}`)
  }
  const parent = context?.parent
  if (parent) {
    terms.add(`parent.receiver:${parent.receiver}`)
    terms.add(`parent.account:${parent.account}`)
    terms.add(`parent.action:${parent.name}`)
  }
  for (const term of dataTerms) terms.add(term)
  for (const term of context?.rowTerms ?? []) terms.add(term)
  if (context?.creator) terms.add(`creator:${context.creator}`)
  // Only data terms can exceed MAX_TERM_LENGTH (dataSearchTerms drops those): names are at most 13
  // characters, a row term at most 48.
  return [...terms]
}

const NO_CONTEXT: ActionTermContext = Object.freeze({})

/**
 * The terms of one row change: `db.table` as `<table>/<scope>`, `db.key` as `<table>/<scope>/<key as a name>` (dfuse's
 * rendering).
 */
function rowTerms(row: Pick<RowChangeRecord, 'table' | 'scope' | 'primaryKey'>): [scoped: string, key: string] {
  const scoped = `${row.table}/${row.scope}`
  return [`db.table:${scoped}`, `db.key:${scoped}/${bigIntToName(row.primaryKey)}`]
}

/** A contract's row changes in one block, as terms. */
interface ContractRows {
  /** `db.table:<table>`, each once. */
  readonly tables: Set<string>
  /** Scoped and key terms, each once. */
  readonly scoped: Set<string>
  /** Scoped and key terms by the names a row carries (scope, payer): the busy-block attribution. */
  readonly byName: Map<string, string[]>
  /** Actions of the block whose receiver is the contract. */
  actions: number
}

/**
 * Where each action of one block's `actions` (as stored: global-sequence order, executed actions
 * only) stands: its parent and the row terms it carries. SHiP reports contract rows per block, not
 * per action, so a row change of contract C is attributed to every action of the block whose
 * receiver is C; in a busy block (more than MAX_ROW_POSTINGS_PER_CONTRACT row postings for C),
 * `db.table:<table>` still goes to all of them but a row's `<table>/<scope>` and key terms only to
 * those naming the row's scope or payer (as authorizer, RAM payer or a `data.*` value, from
 * `dataTerms[i]`). Ingest and the query side compute it the same way from the same block.
 */
export function blockTermContexts(
  actions: readonly ActionRecord[],
  rows: readonly Pick<RowChangeRecord, 'code' | 'table' | 'scope' | 'primaryKey' | 'payer'>[],
  dataTerms: (index: number) => readonly string[],
): ActionTermContext[] {
  const contracts = new Map<string, ContractRows>()
  for (const row of rows) {
    let c = contracts.get(row.code)
    if (!c) contracts.set(row.code, (c = { tables: new Set(), scoped: new Set(), byName: new Map(), actions: 0 }))
    c.tables.add(`db.table:${row.table}`)
    const terms = rowTerms(row)
    for (const term of terms) c.scoped.add(term)
    for (const name of row.payer === row.scope ? [row.scope] : [row.scope, row.payer]) {
      const list = c.byName.get(name)
      if (list) list.push(...terms)
      else c.byName.set(name, [...terms])
    }
  }
  if (contracts.size) {
    for (const a of actions) {
      const c = contracts.get(a.receiver)
      if (c) c.actions++
    }
  }
  // Every action of a contract shares one array in a quiet block.
  const shared = new Map<string, readonly string[]>()
  for (const [code, c] of contracts)
    if (c.actions * c.scoped.size <= MAX_ROW_POSTINGS_PER_CONTRACT) shared.set(code, [...c.tables, ...c.scoped])

  const contexts: ActionTermContext[] = new Array(actions.length)
  // The actions of the transaction being walked, by ordinal: a creator runs before what it creates.
  let trxId = ''
  const byOrdinal = new Map<number, ActionRecord>()
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]
    if (a.trxId !== trxId) {
      trxId = a.trxId
      byOrdinal.clear()
    }
    byOrdinal.set(a.actionOrdinal, a)
    const parent = a.creatorActionOrdinal === 0 ? undefined : byOrdinal.get(a.creatorActionOrdinal)
    const c = contracts.get(a.receiver)
    const rowTermsOf = c ? (shared.get(a.receiver) ?? busyRowTerms(c, a, dataTerms(i))) : undefined
    contexts[i] = parent || rowTermsOf ? { parent, rowTerms: rowTermsOf } : NO_CONTEXT
  }
  return contexts
}

/** A busy block's row terms for one action: every table, and the rows whose scope or payer the action names. */
function busyRowTerms(c: ContractRows, action: ActionRecord, dataTerms: readonly string[]): string[] {
  const names = new Set<string>()
  for (const level of action.authorization) names.add(level.actor)
  for (const d of action.ramDeltas) names.add(d.account)
  for (const term of dataTerms) names.add(term.slice(term.indexOf(':') + 1))
  const terms = new Set(c.tables)
  for (const name of names) for (const term of c.byName.get(name) ?? []) terms.add(term)
  return [...terms]
}

/**
 * Every action's search terms for one block: `dataTerms(i)` are the `data.*` terms of
 * `actions[i]` (dataSearchTerms with the ABI in force at it); `creators` names, by transaction id,
 * the account that created each deferred transaction the block runs (see `deferredCreator`).
 */
export function blockSearchTerms(
  actions: readonly ActionRecord[],
  rows: readonly Pick<RowChangeRecord, 'code' | 'table' | 'scope' | 'primaryKey' | 'payer'>[],
  dataTerms: (index: number) => readonly string[],
  creators?: ReadonlyMap<string, string>,
): string[][] {
  const contexts = blockTermContexts(actions, rows, dataTerms)
  return actions.map((a, i) => {
    const creator = creators?.get(a.trxId)
    return actionSearchTerms(a, dataTerms(i), creator ? { ...contexts[i], creator } : contexts[i])
  })
}

/**
 * The `creator:` of a deferred transaction from its creation: the contract that scheduled it, or,
 * for a transaction pushed with a delay (no sender), the account that pays for it (its first
 * authorizer, who pushed it).
 */
export function deferredCreator(deferred: Pick<DeferredCreation, 'sender' | 'payer'>): string {
  return deferred.sender !== '' ? deferred.sender : deferred.payer
}
