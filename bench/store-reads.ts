import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { ms, timeIt as timed } from './timing.ts'
import { withBenchDatabase } from './bench-database.ts'
import {
  openPostgresStore,
  openSqliteStore,
  type BlockBatch,
  type RowChangeRecord,
  type Store,
} from '../src/store/index.ts'

const ROUNDS = 20
/** Untimed calls of each read before the timed ones, as in the search figures: a server pays its JIT warm-up once. */
const WARMUP = 20
const BIG_SCOPE_ROWS = 1000
const SMALL_SCOPES = 1500

function block(num: number, rows: RowChangeRecord[]): BlockBatch {
  const id = (n: number) => n.toString(16).padStart(8, '0') + 'b'.repeat(56)
  return {
    block: {
      num,
      id: id(num),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1),
      timestampMs: num * 500,
      producer: 'p',
      transactionCount: 0,
      actionCount: 0,
    },
    transactions: [],
    actions: [],
    rows,
    abis: [],
    permissions: [],
    links: [],
  }
}

/** A distinct valid name per index: base-26 digits spelled as letters. */
function scopeName(i: number): string {
  return `s${i.toString(26).replace(/[0-9a-p]/g, (c) => String.fromCharCode(c <= '9' ? 97 + Number(c) : c.charCodeAt(0) + 10))}`
}

/** History: every round rewrites the big scope (1,000 rows) and a slice of the small scopes. */
async function fill(store: Store): Promise<number> {
  let num = 0
  const value = (round: number) => new Uint8Array(16).fill(round)
  for (let round = 0; round < ROUNDS; round++) {
    const batches: BlockBatch[] = []
    for (let chunk = 0; chunk < BIG_SCOPE_ROWS; chunk += 250) {
      const rows = Array.from({ length: 250 }, (_, i) => ({
        code: 'bench',
        scope: 'big',
        table: 'rows',
        primaryKey: BigInt(chunk + i),
        payer: 'bench',
        value: value(round),
      }))
      batches.push(block(++num, rows))
    }
    const small = Array.from({ length: (SMALL_SCOPES * 5) / ROUNDS }, (_, i) => {
      const n = round * ((SMALL_SCOPES * 5) / ROUNDS) + i
      return {
        code: 'bench',
        scope: scopeName(n % SMALL_SCOPES),
        table: 'rows',
        primaryKey: BigInt(Math.floor(n / SMALL_SCOPES)),
        payer: 'bench',
        value: value(round),
      }
    })
    batches.push(block(++num, small))
    await store.applyBlocks(batches, num)
  }
  return num
}

async function measure(
  store: Store,
  head: number,
  rawScan: () => Promise<unknown>,
  smoke: boolean,
): Promise<Record<string, string>> {
  // The smoke times a twentieth of the calls (one at least), after as many warm-up calls.
  const timeIt = (runs: number, fn: () => Promise<unknown>, warmup = 0) =>
    timed(smoke ? Math.ceil(runs / 20) : runs, fn, smoke ? Math.ceil(warmup / 20) : warmup)
  const past = Math.floor(head / 2)
  const scopes = await store.scopes({ code: 'bench', table: 'rows', blockNum: head })
  const out: Record<string, string> = {}
  const atHead = await timeIt(
    200,
    () => store.tableRows({ code: 'bench', table: 'rows', scope: 'big', blockNum: head }),
    WARMUP,
  )
  out['1,000-row scope at head'] = ms(atHead)
  out['1,000-row scope at a past height'] = ms(
    await timeIt(200, () => store.tableRows({ code: 'bench', table: 'rows', scope: 'big', blockNum: past }), WARMUP),
  )
  out['raw driver scan of the same 1,000 current rows (limit)'] = ms(await timeIt(200, rawScan, WARMUP))
  out['one row by primary key at a past height'] = ms(
    await timeIt(
      500,
      () => store.tableRow({ code: 'bench', table: 'rows', scope: 'big', primaryKey: 500n, blockNum: past }),
      WARMUP,
    ),
  )
  out[`all ${scopes.length} scopes of the table at head, one tableRows each`] = ms(
    await timeIt(5, async () => {
      for (const scope of scopes) await store.tableRows({ code: 'bench', table: 'rows', scope, blockNum: head })
    }),
  )
  out[`all ${scopes.length} scopes of the table at head, one tableRowsOfScopes`] = ms(
    await timeIt(20, () => store.tableRowsOfScopes({ code: 'bench', table: 'rows', scopes, blockNum: head }), 2),
  )
  out['scopes of the table at head'] = ms(
    await timeIt(20, () => store.scopes({ code: 'bench', table: 'rows', blockNum: head }), 2),
  )
  return out
}

const CURRENT_ROWS =
  "SELECT pk, payer, value FROM row_versions WHERE code = 'bench' AND tbl = 'rows' AND scope = 'big' AND valid_to IS NULL"

/** Store reads on SQLite, and on a throw-away PostgreSQL database when `postgresUrl`, each next to a raw scan. */
export async function benchStoreReads(postgresUrl: string | undefined, smoke = false): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-reads-'))
  const figures: Record<string, string> = {}
  const record = (label: string, out: Record<string, string>) => {
    for (const [k, v] of Object.entries(out)) figures[`${label}: ${k}`] = v
  }
  try {
    const path = join(dir, 'store.sqlite')
    const sqlite = openSqliteStore(path)
    const head = await fill(sqlite)
    const raw = new Database(path, { readonly: true })
    const scan = raw.prepare(CURRENT_ROWS)
    record('SQLite', await measure(sqlite, head, async () => scan.all(), smoke))
    raw.close()
    await sqlite.close()
    if (!postgresUrl) return figures
    await withBenchDatabase(postgresUrl, async (url) => {
      const store = await openPostgresStore(url)
      await fill(store)
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      record('PostgreSQL', await measure(store, head, () => client.query(CURRENT_ROWS), smoke))
      await client.end()
      await store.close()
    })
    return figures
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
