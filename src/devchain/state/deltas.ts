import { Serializer, PublicKey } from '@wharfkit/antelope'
import { BinaryWriter, fromHex, nameToBigInt } from '../../antelope/index.ts'
import { SHIP_TABLE_ORDER, type Authority, type StateTables, type TableName } from './rows.ts'
import type { RowChange } from './state-db.ts'

// module-memo: key text → packed bytes is a pure function; shared and bounded, no caller can tell it is there.
const publicKeyBytes = new Map<string, Uint8Array>()

function writePublicKey(w: BinaryWriter, key: string): void {
  let bytes = publicKeyBytes.get(key)
  if (!bytes) {
    if (publicKeyBytes.size >= 10_000) publicKeyBytes.clear()
    publicKeyBytes.set(key, (bytes = Serializer.encode({ object: PublicKey.from(key) }).array))
  }
  w.raw(bytes)
}

function writeName(w: BinaryWriter, name: string): void {
  w.uint64(nameToBigInt(name))
}

export function writeAuthority(w: BinaryWriter, auth: Authority): void {
  w.uint32(auth.threshold).varuint32(auth.keys.length)
  for (const k of auth.keys) {
    writePublicKey(w, k.key)
    w.uint16(k.weight)
  }
  w.varuint32(auth.accounts.length)
  for (const a of auth.accounts) {
    writeName(w, a.permission.actor)
    writeName(w, a.permission.permission)
    w.uint16(a.weight)
  }
  w.varuint32(auth.waits.length)
  for (const wait of auth.waits) w.uint32(wait.wait_sec).uint16(wait.weight)
}

function writeUint128(w: BinaryWriter, decimal: string): void {
  const v = BigInt(decimal)
  w.uint64(v & 0xffffffffffffffffn).uint64(v >> 64n)
}

type RowEncoder<T extends TableName> = (w: BinaryWriter, row: StateTables[T]) => void

/** Each SHiP table's row, as its `_v0` variant (index 0 first). */
const ENCODERS: { [T in TableName]?: RowEncoder<T> } = {
  account: (w, r) => {
    writeName(w.uint8(0), r.name)
    w.uint32(r.creationSlot).bytes(r.abi)
  },
  account_metadata: (w, r) => {
    writeName(w.uint8(0), r.name)
    w.bool(r.privileged)
      .int64(r.lastCodeUpdateUs)
      .bool(r.codeHash !== undefined)
    if (r.codeHash !== undefined) w.uint8(0).uint8(0).raw(fromHex(r.codeHash))
  },
  code: (w, r) => {
    w.uint8(0).uint8(0).uint8(0).raw(fromHex(r.codeHash)).bytes(r.code)
  },
  contract_table: (w, r) => {
    w.uint8(0)
    writeName(w, r.code)
    writeName(w, r.scope)
    writeName(w, r.table)
    writeName(w, r.payer)
  },
  contract_row: (w, r) => {
    w.uint8(0)
    writeName(w, r.code)
    writeName(w, r.scope)
    writeName(w, r.table)
    w.uint64(r.primaryKey)
    writeName(w, r.payer)
    w.bytes(r.value)
  },
  generated_transaction: (w, r) => {
    writeName(w.uint8(0), r.sender)
    writeUint128(w, r.senderId)
    writeName(w, r.payer)
    w.raw(fromHex(r.trxId)).bytes(r.packedTrx)
  },
  permission: (w, r) => {
    writeName(w.uint8(0), r.owner)
    writeName(w, r.name)
    writeName(w, r.parent)
    w.int64(r.lastUpdatedUs)
    writeAuthority(w, r.auth)
  },
  permission_link: (w, r) => {
    writeName(w.uint8(0), r.account)
    writeName(w, r.code)
    writeName(w, r.messageType)
    writeName(w, r.requiredPermission)
  },
  resource_limits: (w, r) => {
    writeName(w.uint8(0), r.owner)
    w.int64(r.netWeight).int64(r.cpuWeight).int64(r.ramBytes)
  },
  resource_usage: (w, r) => {
    writeName(w.uint8(0), r.owner)
    for (let i = 0; i < 2; i++) w.uint32(0).uint64(0n).uint64(0n)
    w.uint64(r.ramUsage)
  },
}

/** The SHiP row bytes of one state row (a `<table>` variant). */
export function encodeStateRow<T extends TableName>(table: T, row: StateTables[T]): Uint8Array {
  const encoder = ENCODERS[table] as RowEncoder<T> | undefined
  if (!encoder) throw new Error(`state: table ${table} is not a SHiP table`)
  const w = new BinaryWriter(128)
  encoder(w, row)
  return w.finish()
}

/**
 * Packs a `table_delta[]` from row changes as nodeos does: tables in fixed order, unchanged
 * tables omitted, and in each table the modified rows, then the removed (old row), then the created.
 */
export function encodeDeltas(changes: readonly RowChange[]): Uint8Array {
  const byTable = new Map<TableName, { modified: Uint8Array[]; removed: Uint8Array[]; created: Uint8Array[] }>()
  for (const change of changes) {
    if (!ENCODERS[change.table]) continue
    let groups = byTable.get(change.table)
    if (!groups) byTable.set(change.table, (groups = { modified: [], removed: [], created: [] }))
    if (change.current === undefined) groups.removed.push(encodeStateRow(change.table, change.old as never))
    else if (change.old === undefined) groups.created.push(encodeStateRow(change.table, change.current as never))
    else groups.modified.push(encodeStateRow(change.table, change.current as never))
  }
  const tables = SHIP_TABLE_ORDER.filter((t) => byTable.has(t))
  const w = new BinaryWriter(1024).varuint32(tables.length)
  for (const table of tables) {
    const g = byTable.get(table)!
    w.uint8(0)
      .string(table)
      .varuint32(g.modified.length + g.removed.length + g.created.length)
    for (const data of g.modified) w.bool(true).bytes(data)
    for (const data of g.removed) w.bool(false).bytes(data)
    for (const data of g.created) w.bool(true).bytes(data)
  }
  return w.finish()
}

/** The full-state dump nodeos writes as the first chain-state entry: every row, present. */
export function encodeFullState(
  rowsOf: <T extends TableName>(table: T) => Iterable<[string, StateTables[T]]>,
): Uint8Array {
  const changes: RowChange[] = []
  for (const table of SHIP_TABLE_ORDER)
    for (const [key, row] of rowsOf(table)) changes.push({ table, key, old: undefined, current: row })
  return encodeDeltas(changes)
}
