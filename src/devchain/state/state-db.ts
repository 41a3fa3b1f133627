import type { StateTables, TableName } from './rows.ts'

/** One recorded change: the row as it was before the session first touched it. */
interface UndoEntry {
  readonly table: TableName
  readonly key: string
  readonly old: unknown
}

/** A row changed by a session: what it was when the session began and what it is now. */
export interface RowChange<T extends TableName = TableName> {
  readonly table: T
  readonly key: string
  readonly old: StateTables[T] | undefined
  readonly current: StateTables[T] | undefined
}

/** Keeps the keys of each (code, scope, table) sorted by primary key for ordered reads. */
type ScopeIndex = Map<string, Set<string>>

/**
 * The chain state: keyed tables with nested undo sessions, as nodeos's chainbase.
 * A block opens a session, each transaction a nested one that is squashed on success or undone
 * on failure; a block's session stays until the block is irreversible, so forks can undo it.
 * Invariant: a session records the first old value of every key it touches, so undoing restores
 * the state exactly and its entries are exactly the block's state delta.
 */
export class StateDb {
  private readonly tables = new Map<TableName, Map<string, unknown>>()
  private readonly sessions: Map<string, UndoEntry>[] = []
  private readonly scopeIndex: ScopeIndex = new Map()

  private table<T extends TableName>(name: T): Map<string, StateTables[T]> {
    let t = this.tables.get(name)
    if (!t) this.tables.set(name, (t = new Map()))
    return t as Map<string, StateTables[T]>
  }

  get<T extends TableName>(table: T, key: string): StateTables[T] | undefined {
    return this.table(table).get(key)
  }

  has(table: TableName, key: string): boolean {
    return this.table(table).has(key)
  }

  put<T extends TableName>(table: T, key: string, row: StateTables[T]): void {
    this.record(table, key)
    this.write(table, key, row)
  }

  delete(table: TableName, key: string): void {
    if (!this.table(table).has(key)) return
    this.record(table, key)
    this.write(table, key, undefined)
  }

  /** All rows of a table (unordered). */
  rows<T extends TableName>(table: T): IterableIterator<[string, StateTables[T]]> {
    return this.table(table).entries()
  }

  /** Keys of contract rows in one (code, scope, table), sorted by primary key. */
  contractRowKeys(code: string, scope: string, table: string): string[] {
    const keys = this.scopeIndex.get(contractScopeKey(code, scope, table))
    return keys ? [...keys].sort() : []
  }

  get depth(): number {
    return this.sessions.length
  }

  startSession(): void {
    this.sessions.push(new Map())
  }

  /** Folds the top session into the one below, keeping the older old values. */
  squash(): void {
    const top = this.popSession()
    const parent = this.sessions[this.sessions.length - 1]
    if (!parent) return
    for (const [id, entry] of top) if (!parent.has(id)) parent.set(id, entry)
  }

  /** Restores every row the top session touched. */
  undo(): void {
    const top = this.popSession()
    for (const entry of top.values()) this.write(entry.table, entry.key, entry.old)
  }

  /** Forgets the oldest session (its block became irreversible). */
  commitOldest(): void {
    if (this.sessions.length === 0) throw new Error('state: no session to commit')
    this.sessions.shift()
  }

  /** What the top session changed, skipping rows restored to what they were. */
  changes(): RowChange[] {
    const top = this.sessions[this.sessions.length - 1]
    if (!top) return []
    const out: RowChange[] = []
    for (const entry of top.values()) {
      const current = this.table(entry.table).get(entry.key)
      if (entry.old === current) continue
      out.push({ table: entry.table, key: entry.key, old: entry.old as never, current: current as never })
    }
    return out
  }

  private popSession(): Map<string, UndoEntry> {
    const top = this.sessions.pop()
    if (!top) throw new Error('state: no open session')
    return top
  }

  private record(table: TableName, key: string): void {
    const session = this.sessions[this.sessions.length - 1]
    if (!session) return
    const id = `${table}\u0001${key}`
    if (!session.has(id)) session.set(id, { table, key, old: this.table(table).get(key) })
  }

  private write(table: TableName, key: string, row: unknown): void {
    const t = this.table(table)
    if (row === undefined) t.delete(key)
    else t.set(key, row as never)
    if (table === 'contract_row') {
      const cut = key.lastIndexOf('\u0000')
      const scopeKey = key.slice(0, cut)
      let set = this.scopeIndex.get(scopeKey)
      if (!set) this.scopeIndex.set(scopeKey, (set = new Set()))
      if (row === undefined) set.delete(key)
      else set.add(key)
      if (set.size === 0) this.scopeIndex.delete(scopeKey)
    }
  }
}

export function contractScopeKey(code: string, scope: string, table: string): string {
  return `${code}\u0000${scope}\u0000${table}`
}

/** Key of a contract row; the fixed-width hex primary key makes string order numeric order. */
export function contractRowKey(code: string, scope: string, table: string, primaryKey: bigint): string {
  return `${contractScopeKey(code, scope, table)}\u0000${primaryKey.toString(16).padStart(16, '0')}`
}
