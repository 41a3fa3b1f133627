import { ABI, ABIDecoder, Name, Serializer, UInt64 } from '@wharfkit/antelope'
import { createShipReader, decodeShipType } from '../../src/ship/index.ts'

/**
 * The brute-force side of test/state/differential.test.ts: the canonical chain read back over
 * SHiP from block 1 (decoded with wharfkit and the SHiP ABI, not the indexer's hand-written
 * decoders) and replayed block by block into a plain map of rows and ABIs.
 */

/** One `contract_row` delta of a block: the row's new value, or (present false) its removal. */
export interface RowDelta {
  readonly present: boolean
  readonly code: string
  readonly scope: string
  readonly table: string
  readonly primaryKey: bigint
  readonly payer: string
  /** Lowercase hex of the row bytes (the old row's on a removal). */
  readonly value: string
}

/** A canonical block's id and the state changes this test follows. */
export interface ChainBlock {
  readonly num: number
  readonly id: string
  readonly rows: readonly RowDelta[]
  /** `account` deltas (present rows): the ABI each account holds after this block, hex. */
  readonly abis: readonly { account: string; abi: string }[]
}

type Variant<T> = [string, T]

function decodeBlock(num: number, id: string, deltas: Uint8Array | undefined): ChainBlock {
  const rows: RowDelta[] = []
  const abis: { account: string; abi: string }[] = []
  const tables =
    deltas && deltas.length > 0
      ? decodeShipType<Variant<{ name: string; rows: { present: boolean; data: string }[] }>[]>('table_delta[]', deltas)
      : []
  for (const [, delta] of tables) {
    for (const row of delta.rows) {
      const data = new Uint8Array(Buffer.from(row.data, 'hex'))
      if (delta.name === 'contract_row') {
        const [, r] = decodeShipType<
          Variant<{
            code: string
            scope: string
            table: string
            primary_key: string | number
            payer: string
            value: string
          }>
        >('contract_row', data)
        rows.push({
          present: row.present,
          code: r.code,
          scope: r.scope,
          table: r.table,
          primaryKey: BigInt(r.primary_key),
          payer: r.payer,
          value: r.value.toLowerCase(),
        })
      } else if (delta.name === 'account' && row.present) {
        const [, a] = decodeShipType<Variant<{ name: string; abi: string }>>('account', data)
        abis.push({ account: a.name, abi: a.abi.toLowerCase() })
      }
    }
  }
  return { num, id, rows, abis }
}

/** Blocks 1..head as a fresh SHiP session serves them (the chain must not fork meanwhile). */
export async function readCanonicalChain(shipUrl: string, head: number): Promise<ChainBlock[]> {
  const reader = createShipReader({
    url: shipUrl,
    startBlockNum: 1,
    endBlockNum: head + 1,
    fetchBlock: false,
    fetchTraces: false,
    fetchDeltas: true,
    maxMessagesInFlight: 64,
    reconnect: { maxAttempts: 3 },
  })
  const blocks: ChainBlock[] = []
  try {
    for await (const result of reader.blocks()) {
      const ref = result.thisBlock
      if (!ref) continue
      if (ref.blockNum !== blocks.length + 1)
        throw new Error(`SHiP sent block ${ref.blockNum} after ${blocks.length}: the chain forked while it was read`)
      blocks.push(decodeBlock(ref.blockNum, ref.blockId, result.deltas))
      if (ref.blockNum === head) break
    }
  } finally {
    await reader.close()
  }
  if (blocks.length !== head) throw new Error(`SHiP ended at block ${blocks.length}, expected ${head}`)
  return blocks
}

/** A row of the replayed state: its bytes, payer and the block of its last change. */
export interface ModelRow {
  readonly primaryKey: bigint
  readonly payer: string
  readonly value: string
  readonly block: number
}

/**
 * The state replayed up to `height`: rows by (code, table) → scope → primary key, and ABIs with the block that set
 * them.
 */
export class StateReplay {
  height = 0
  private readonly tables = new Map<string, Map<string, Map<bigint, ModelRow>>>()
  private readonly abis = new Map<string, { abi: string; block: number }>()

  apply(block: ChainBlock): void {
    if (block.num !== this.height + 1) throw new Error(`replay: block ${block.num} after ${this.height}`)
    for (const d of block.rows) {
      const table = `${d.code}\u0000${d.table}`
      let scopes = this.tables.get(table)
      if (!scopes) this.tables.set(table, (scopes = new Map()))
      let rows = scopes.get(d.scope)
      if (!rows) scopes.set(d.scope, (rows = new Map()))
      if (d.present)
        rows.set(d.primaryKey, { primaryKey: d.primaryKey, payer: d.payer, value: d.value, block: block.num })
      else if (!rows.delete(d.primaryKey))
        throw new Error(
          `replay: block ${block.num} removes ${d.code}/${d.table}/${d.scope}/${d.primaryKey}, which does not exist`,
        )
    }
    for (const a of block.abis) this.abis.set(a.account, { abi: a.abi, block: block.num })
    this.height = block.num
  }

  /** Rows of one (code, table, scope), in primary-key order. */
  rows(code: string, table: string, scope: string): ModelRow[] {
    const rows = this.tables.get(`${code}\u0000${table}`)?.get(scope)
    return rows
      ? [...rows.values()].sort((a, b) => (a.primaryKey < b.primaryKey ? -1 : a.primaryKey > b.primaryKey ? 1 : 0))
      : []
  }

  /** Scopes of (code, table) holding at least one row, sorted. */
  scopes(code: string, table: string): string[] {
    const scopes = this.tables.get(`${code}\u0000${table}`)
    return scopes
      ? [...scopes]
          .filter(([, rows]) => rows.size > 0)
          .map(([scope]) => scope)
          .sort()
      : []
  }

  /** The ABI in force (hex) and the block that set it; undefined when none or empty. */
  abi(account: string): { abi: string; block: number } | undefined {
    const abi = this.abis.get(account)
    return abi && abi.abi.length > 0 ? abi : undefined
  }
}

/**
 * The reference row decoder: wharfkit's Serializer with the row type of the ABI. Invalid UTF-8 is
 * tolerated and bytes left over are a failure, the rule docs/ARCHITECTURE.md and
 * src/antelope/abi.ts state for rows (wharfkit alone would throw on the first and ignore the second).
 */
export function referenceDecode(abi: ABI, type: string, hex: string): { ok: true; value: unknown } | { ok: false } {
  try {
    const decoder = new ABIDecoder(new Uint8Array(Buffer.from(hex, 'hex')), new TextDecoder('utf-8', { fatal: false }))
    const value = Serializer.decode({ abi, type, data: decoder })
    if (decoder.canRead()) return { ok: false }
    return { ok: true, value: JSON.parse(JSON.stringify(Serializer.objectify(value))) as unknown }
  } catch {
    return { ok: false }
  }
}

/** A binary ABI (hex) as wharfkit's ABI, cached by its text. */
export function abiFromHex(cache: Map<string, ABI>, hex: string): ABI {
  let abi = cache.get(hex)
  if (!abi) cache.set(hex, (abi = ABI.from(Serializer.decode({ data: hex, type: ABI }))))
  return abi
}

/** The key renderings of docs/API.md (key_type), written here rather than taken from src/antelope. */
export function referenceKey(pk: bigint, keyType: 'uint64' | 'hex' | 'name'): string {
  if (keyType === 'uint64') return pk.toString(10)
  if (keyType === 'name') return Name.from(UInt64.from(pk.toString())).toString()
  let out = ''
  for (let i = 0n; i < 8n; i++) out += ((pk >> (8n * i)) & 0xffn).toString(16).padStart(2, '0')
  return out
}
