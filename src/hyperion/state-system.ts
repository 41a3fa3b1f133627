import { unpackTransaction, type AbiCache } from '../antelope/index.ts'
import type { SnapshotReader } from '../store/index.ts'
import { hyperionTime } from './time.ts'

/**
 * get_voters, get_voter_scopes and get_proposals from the system contract's and eosio.msig's tables at head (the
 * tables Hyperion copies into MongoDB). A chain without those contracts, or whose ABI lacks the table, has no rows:
 * the answers are empty, never an error.
 */

type Reader = Pick<SnapshotReader, 'abi' | 'scopes' | 'tableRows' | 'tableRowsOfScopes'>

/** A decoded row of a table: its scope, the block that wrote it and its fields. */
interface DecodedRow {
  readonly scope: string
  readonly blockNum: number
  readonly fields: Record<string, unknown>
}

/** The most rows one of these answers reads from a table (a larger table answers what it read, sorted). */
export const SYSTEM_TABLE_MAX_ROWS = 100_000

/** Rows of `code`'s `table` at head in `scopes` (every scope when undefined), decoded; [] without an ABI for it. */
async function decodedRows(
  reader: Reader,
  abis: AbiCache,
  args: { code: string; table: string; scopes?: readonly string[]; blockNum: number },
): Promise<DecodedRow[]> {
  const stored = await reader.abi({ account: args.code, blockNum: args.blockNum })
  const compiled = stored && abis.fromBinary(stored.abi)
  if (!compiled || !compiled.ok) return []
  const rowType = compiled.value.abi.tables.find((t) => t.name.toString() === args.table)?.type
  if (rowType === undefined) return []
  const scopes = args.scopes ?? (await reader.scopes({ code: args.code, table: args.table, blockNum: args.blockNum }))
  if (scopes.length === 0) return []
  const rows = await reader.tableRowsOfScopes({
    code: args.code,
    table: args.table,
    scopes: scopes.slice(0, SYSTEM_TABLE_MAX_ROWS),
    blockNum: args.blockNum,
  })
  const out: DecodedRow[] = []
  for (const row of rows.slice(0, SYSTEM_TABLE_MAX_ROWS)) {
    const decoded = compiled.value.decode(rowType, row.value)
    if (decoded.ok && typeof decoded.value === 'object' && decoded.value !== null)
      out.push({ scope: row.scope, blockNum: row.blockNum, fields: decoded.value as Record<string, unknown> })
  }
  return out
}

const text = (value: unknown): string => (typeof value === 'string' ? value : String(value ?? ''))
const numeric = (value: unknown): number => (typeof value === 'number' ? value : Number(value ?? 0))

/** A voter of `get_voters`. `last_vote_block` is the block that last wrote the voter's row (a vote or a stake). */
export interface HyperionVoter {
  readonly account: string
  readonly weight: number
  readonly staked: number
  readonly is_proxy: boolean
  readonly last_vote_block: number
  readonly producers?: string[]
}

/**
 * The system contract's voters at head (eosio `voters`, scope eosio), by weight descending: those who voted for every
 * producer of `producers`, proxies only with `isProxy`, with their producers when `listProducers`.
 */
export async function votersAt(
  reader: Reader,
  abis: AbiCache,
  args: { blockNum: number; producers: readonly string[]; isProxy: boolean; listProducers: boolean },
): Promise<HyperionVoter[]> {
  const rows = await decodedRows(reader, abis, { code: 'eosio', table: 'voters', scopes: ['eosio'], ...args })
  const voters: HyperionVoter[] = []
  for (const { fields, blockNum } of rows) {
    const voted = Array.isArray(fields.producers) ? fields.producers.map(text) : []
    if (!args.producers.every((p) => voted.includes(p))) continue
    const isProxy = fields.is_proxy === true || fields.is_proxy === 1
    if (args.isProxy && !isProxy) continue
    voters.push({
      account: text(fields.owner),
      weight: numeric(fields.last_vote_weight),
      staked: numeric(fields.staked),
      is_proxy: isProxy,
      last_vote_block: blockNum,
      ...(args.listProducers ? { producers: voted } : {}),
    })
  }
  return voters.sort((a, b) => b.weight - a.weight || (a.account < b.account ? -1 : 1))
}

/** `get_voter_scopes`: voters whose name holds `term`, by name, at most `limit`. */
export async function voterScopesAt(
  reader: Reader,
  abis: AbiCache,
  args: { blockNum: number; term: string; limit: number },
): Promise<string[]> {
  const rows = await decodedRows(reader, abis, { code: 'eosio', table: 'voters', scopes: ['eosio'], ...args })
  return rows
    .map((r) => text(r.fields.owner))
    .filter((owner) => owner.includes(args.term))
    .sort()
    .slice(0, args.limit)
}

/** An approval of a proposal: who, at which permission, and when (eosio.msig `approvals2`). */
interface Approval {
  readonly actor: string
  readonly permission: string
  readonly time: string | null
}

/** A proposal of `get_proposals` (pending: eosio.msig erases executed and canceled ones from its tables). */
export interface HyperionProposal {
  readonly proposal_name: string
  readonly expiration: string
  readonly earliest_exec_time: string | null
  readonly block_num: number
  readonly proposer: string
  readonly executed: false
  readonly primary_key: string
  readonly trx: unknown
  readonly requested_approvals: Approval[]
  readonly provided_approvals: Approval[]
}

const approvalsOf = (value: unknown): Approval[] =>
  Array.isArray(value)
    ? value.map((a: { level?: { actor?: unknown; permission?: unknown }; time?: unknown }) => ({
        actor: text(a.level?.actor),
        permission: text(a.level?.permission),
        time: a.time === undefined || a.time === null ? null : text(a.time),
      }))
    : []

/** Filters of get_proposals (each optional). */
export interface ProposalFilter {
  readonly proposer?: string
  readonly proposal?: string
  /** Accounts that must be among the requested or provided approvals. */
  readonly accounts?: readonly string[]
  readonly requested?: readonly string[]
  readonly provided?: readonly string[]
  readonly executed?: boolean
  readonly expired?: boolean
}

/** eosio.msig's pending proposals at head, newest first, filtered; each with its approvals and transaction. */
export async function proposalsAt(
  reader: Reader,
  abis: AbiCache,
  args: { blockNum: number; nowMs: number; filter: ProposalFilter },
): Promise<HyperionProposal[]> {
  const f = args.filter
  const scopes = f.proposer === undefined ? undefined : [f.proposer]
  const rows = await decodedRows(reader, abis, { code: 'eosio.msig', table: 'proposal', scopes, ...args })
  if (rows.length === 0) return []
  const approvals = await decodedRows(reader, abis, {
    code: 'eosio.msig',
    table: 'approvals2',
    scopes: [...new Set(rows.map((r) => r.scope))],
    blockNum: args.blockNum,
  })
  const approvalsOfProposal = new Map(approvals.map((a) => [`${a.scope}:${text(a.fields.proposal_name)}`, a.fields]))
  const out: HyperionProposal[] = []
  for (const { scope, blockNum, fields } of rows) {
    const name = text(fields.proposal_name)
    if (f.proposal !== undefined && name !== f.proposal) continue
    if (f.executed === true) continue
    const trx = unpackTransaction(text(fields.packed_transaction))
    const expirationMs = trx ? Date.parse(`${trx.expiration}Z`) : NaN
    const expired = Number.isFinite(expirationMs) && expirationMs < args.nowMs
    if (f.expired !== undefined && f.expired !== expired) continue
    const approval = approvalsOfProposal.get(`${scope}:${name}`)
    const requested = approvalsOf(approval?.requested_approvals)
    const provided = approvalsOf(approval?.provided_approvals)
    const hasAll = (list: readonly string[] | undefined, from: Approval[]) =>
      list === undefined || list.every((actor) => from.some((a) => a.actor === actor))
    if (!hasAll(f.requested, requested) || !hasAll(f.provided, provided)) continue
    if (f.accounts !== undefined && !f.accounts.every((x) => [...requested, ...provided].some((a) => a.actor === x)))
      continue
    out.push({
      proposal_name: name,
      expiration: trx ? trx.expiration : '',
      earliest_exec_time:
        fields.earliest_exec_time === undefined || fields.earliest_exec_time === null
          ? null
          : text(fields.earliest_exec_time),
      block_num: blockNum,
      proposer: scope,
      executed: false,
      primary_key: name,
      trx: trx ?? null,
      requested_approvals: requested,
      provided_approvals: provided,
    })
  }
  return out.sort((a, b) => b.block_num - a.block_num || (a.proposal_name < b.proposal_name ? -1 : 1))
}

/** A block's time in Hyperion's format, or '' when the store does not hold the block. */
export async function blockTime(reader: Pick<SnapshotReader, 'blockByNum'>, blockNum: number): Promise<string> {
  const block = await reader.blockByNum(blockNum)
  return block ? hyperionTime(block.timestampMs) : ''
}
