import Database from 'better-sqlite3'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { decodeEntries, openSqliteStore, type OpenStoreOptions, type Store } from '../../src/store/index.ts'
import { onCleanup } from './cleanup.ts'
import { tempDir } from './devchain.ts'

/**
 * Opens stores on one SQLite file in a fresh temporary directory; each is closed (its checkpoint
 * thread ended) before the directory is removed.
 */
export function tempSqliteFile(t: TestContext, file = 'store.sqlite'): (options?: OpenStoreOptions) => Store {
  const path = join(tempDir(t), file)
  return (options) => {
    const store = openSqliteStore(path, options)
    onCleanup(t, () => store.close())
    return store
  }
}

/** A SQLite store in a fresh temporary directory, closed before the directory is removed. */
export const tempSqliteStore = (t: TestContext, file = 'store.sqlite'): Store => tempSqliteFile(t, file)()

const DATA_TABLES = [
  'blocks',
  'transactions',
  'actions',
  'row_versions',
  'abi_versions',
  'permission_versions',
  'key_versions',
  'link_versions',
]

/**
 * Rows in a total order: by their columns' values, all of them (ORDER BY on the first four left a
 * key's versions, which differ only in a later column, in PostgreSQL's physical order).
 */
function sortedRows<T extends Record<string, unknown>>(rows: T[]): T[] {
  const key = (row: T) =>
    JSON.stringify(Object.values(row), (_k, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
    )
  return rows
    .map((row) => ({ row, key: key(row) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.row)
}

/**
 * Posting chunks as (term_key, seq, flags) entries in order: how a write split them into chunks is not part of what
 * must match.
 */
function postingEntries(
  chunks: readonly Record<string, unknown>[],
): { term_key: number; seq: number; flags: number }[] {
  const out = chunks.flatMap((c) => {
    const { seqs, flags } = decodeEntries(Number(c.first_seq), new Uint8Array(c.entries as Buffer))
    return Array.from(seqs, (seq, i) => ({ term_key: Number(c.term_key), seq, flags: flags[i] }))
  })
  return out.sort((a, b) => a.term_key - b.term_key || a.seq - b.seq)
}

/** Every row of the store's data tables, in key order (the step log and meta are left out: they record history). */
export function dumpSqliteStore(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true })
  try {
    const dump = Object.fromEntries(
      DATA_TABLES.map((t) => [t, sortedRows(db.prepare(`SELECT * FROM ${t}`).all() as Record<string, unknown>[])]),
    )
    return {
      ...dump,
      postings: postingEntries(db.prepare('SELECT * FROM postings').all() as Record<string, unknown>[]),
    }
  } finally {
    db.close()
  }
}

/** A deterministic generator (LCG) for seeded simulations. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** The same dump as `dumpSqliteStore`, from a PostgreSQL store. */
export async function dumpPostgresStore(url: string): Promise<Record<string, unknown[]>> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const out: Record<string, unknown[]> = {}
    for (const t of DATA_TABLES) out[t] = sortedRows((await client.query(`SELECT * FROM ${t}`)).rows)
    out.postings = postingEntries((await client.query('SELECT * FROM postings')).rows)
    return out
  } finally {
    await client.end()
  }
}
