import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fromHex, toHex } from '../../antelope/index.ts'
import type { PackedTransactionInput } from '../chain/intake.ts'

/** An input transaction as it was applied: signed (checked on replay) or trusted (built chains). */
export interface StoredInput {
  readonly trusted: boolean
  readonly packed: PackedTransactionInput
}

/** What SHiP serves of a block. */
export interface ShipPayload {
  readonly num: number
  readonly id: string
  readonly previous: string
  readonly block: Uint8Array
  readonly traces: Uint8Array
  readonly deltas: Uint8Array
  /** Savanna blocks: the packed `finality_data` SHiP sends to readers that ask for it. */
  readonly finalityData?: Uint8Array
}

/** A produced block: what SHiP serves and what a replay needs to produce it again. */
export interface StoredBlock extends ShipPayload {
  readonly slot: number
  readonly producer: string
  readonly inputs: readonly StoredInput[]
}

export interface ChainMeta {
  readonly chainId: string
  readonly genesisSlot: number
  readonly producers: readonly string[]
  /** Savanna mode: the first Savanna block (Spring's "Savanna Genesis block"); absent on a legacy chain. */
  readonly savannaFrom?: number
}

interface BlockRow {
  num: number
  id: string
  previous: string
  slot: number
  producer: string
  block: Buffer
  traces: Buffer
  deltas: Buffer
  inputs: string
  finality: Buffer | null
}

const u8 = (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)

function encodeInputs(inputs: readonly StoredInput[]): string {
  return JSON.stringify(
    inputs.map((i) => ({
      t: i.trusted ? 1 : 0,
      s: i.packed.signatures,
      c: i.packed.compression,
      f: toHex(i.packed.packedContextFreeData),
      p: toHex(i.packed.packedTrx),
    })),
  )
}

function decodeInputs(text: string): StoredInput[] {
  return (JSON.parse(text) as { t: number; s: string[]; c: 0 | 1; f: string; p: string }[]).map((i) => ({
    trusted: i.t === 1,
    packed: { signatures: i.s, compression: i.c, packedContextFreeData: fromHex(i.f), packedTrx: fromHex(i.p) },
  }))
}

function withFinality<T extends ShipPayload>(payload: T, finality: Buffer | null): T {
  return finality ? { ...payload, finalityData: u8(finality) } : payload
}

/**
 * The devchain's canonical chain on disk (SQLite, WAL): one row per block, replaced from the fork
 * point on a fork. `:memory:` keeps it in memory for tests.
 */
export class BlockLog {
  private readonly db: Database.Database
  private readonly insertStmt: Database.Statement
  private readonly byNumStmt: Database.Statement
  private readonly payloadStmt: Database.Statement

  constructor(dataDir: string | undefined) {
    if (dataDir) mkdirSync(dataDir, { recursive: true })
    this.db = new Database(dataDir ? join(dataDir, 'devchain.sqlite') : ':memory:')
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = NORMAL')
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS blocks (
        num INTEGER PRIMARY KEY, id TEXT NOT NULL, previous TEXT NOT NULL, slot INTEGER NOT NULL,
        producer TEXT NOT NULL, block BLOB NOT NULL, traces BLOB NOT NULL, deltas BLOB NOT NULL, inputs TEXT NOT NULL
      );`)
    // Savanna mode's finality_data (logs written before it existed lack the column).
    if (!(this.db.prepare('PRAGMA table_info(blocks)').all() as { name: string }[]).some((c) => c.name === 'finality'))
      this.db.exec('ALTER TABLE blocks ADD COLUMN finality BLOB')
    this.insertStmt = this.db.prepare(
      'INSERT OR REPLACE INTO blocks VALUES (@num, @id, @previous, @slot, @producer, @block, @traces, @deltas, @inputs, @finality)',
    )
    this.byNumStmt = this.db.prepare('SELECT * FROM blocks WHERE num = ?')
    this.payloadStmt = this.db.prepare(
      'SELECT num, id, previous, block, traces, deltas, finality FROM blocks WHERE num = ?',
    )
  }

  meta(): ChainMeta | undefined {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'chain'").get() as { value: string } | undefined
    return row ? (JSON.parse(row.value) as ChainMeta) : undefined
  }

  setMeta(meta: ChainMeta): void {
    this.db.prepare("INSERT OR REPLACE INTO meta VALUES ('chain', ?)").run(JSON.stringify(meta))
  }

  append(block: StoredBlock): void {
    const { num, id, previous, slot, producer } = block
    this.insertStmt.run({
      num,
      id,
      previous,
      slot,
      producer,
      block: Buffer.from(block.block),
      traces: Buffer.from(block.traces),
      deltas: Buffer.from(block.deltas),
      inputs: encodeInputs(block.inputs),
      finality: block.finalityData ? Buffer.from(block.finalityData) : null,
    })
  }

  /** Drops every block at or above `num` (a fork replaces them). */
  truncateFrom(num: number): void {
    this.db.prepare('DELETE FROM blocks WHERE num >= ?').run(num)
  }

  get(num: number): StoredBlock | undefined {
    const row = this.byNumStmt.get(num) as BlockRow | undefined
    return row && this.fromRow(row)
  }

  /** The SHiP payload of a block, without decoding its inputs. */
  payload(num: number): ShipPayload | undefined {
    const row = this.payloadStmt.get(num) as Omit<BlockRow, 'slot' | 'producer' | 'inputs'> | undefined
    return (
      row &&
      withFinality(
        {
          num: row.num,
          id: row.id,
          previous: row.previous,
          block: u8(row.block),
          traces: u8(row.traces),
          deltas: u8(row.deltas),
        },
        row.finality,
      )
    )
  }

  *all(): IterableIterator<StoredBlock> {
    for (const row of this.db.prepare('SELECT * FROM blocks ORDER BY num').iterate() as IterableIterator<BlockRow>)
      yield this.fromRow(row)
  }

  /** Groups many appends into one SQLite transaction (the chain builder). */
  batch<T>(fn: () => T): T {
    return this.db.transaction(fn)()
  }

  close(): void {
    this.db.close()
  }

  /** The number of the last stored block (0 for an empty log). */
  lastNum(): number {
    return (this.db.prepare('SELECT MAX(num) AS num FROM blocks').get() as { num: number | null }).num ?? 0
  }

  private fromRow(row: BlockRow): StoredBlock {
    const { num, id, previous, slot, producer } = row
    return withFinality(
      {
        num,
        id,
        previous,
        slot,
        producer,
        block: u8(row.block),
        traces: u8(row.traces),
        deltas: u8(row.deltas),
        inputs: decodeInputs(row.inputs),
      },
      row.finality,
    )
  }
}
