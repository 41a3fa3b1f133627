import type pg from 'pg'
import { numbered } from '../common-sql.ts'
import { runAsync, type AsyncSqlRunner, type SqlExecutor, type SqlSession } from '../sql-routine.ts'
import type { Queryable } from './column-insert.ts'
import { inTransaction } from './in-transaction.ts'

/** Shared statement texts with their placeholders numbered, by text: kept by a runner and those it shares it with. */
export type NumberedTexts = Map<string, string>

/** The shared statements on a PostgreSQL pool or client: answers are promises. Each text is numbered once. */
export function createPostgresRunner(q: Queryable, texts: NumberedTexts = new Map()): AsyncSqlRunner {
  const numberedOnce = (sql: string) => {
    let text = texts.get(sql)
    if (text === undefined) texts.set(sql, (text = numbered(sql)))
    return text
  }
  return {
    rows: async <T>(sql: string, params: readonly unknown[] = []) =>
      (await q.query(numberedOnce(sql), params as unknown[])).rows as T[],
    run: async (sql, params = []) => (await q.query(numberedOnce(sql), params as unknown[])).rowCount ?? 0,
    bool: (value) => value,
    // pg binds a Uint8Array (alone or in an array) as bytea from its own memory: a copy per blob would cost.
    bytes: (value) => value,
    decimal: (value) => value.toString(),
  }
}

/**
 * Procedures on `pool`: a statement at a time on any of its connections, or a transaction on one of them (begun with
 * `begin`). Its runners share one cache of numbered texts.
 */
export function createPostgresExecutor(pool: pg.Pool, begin = 'BEGIN'): SqlExecutor {
  const texts: NumberedTexts = new Map()
  const onPool = createPostgresRunner(pool, texts)
  return {
    run: (procedure) => runAsync(procedure(onPool)),
    transaction: (procedure) =>
      inTransaction(pool, (client) => runAsync(procedure(createPostgresRunner(client, texts))), begin),
  }
}

/** Procedures a statement at a time on `q` (a client inside a transaction: a snapshot's reads). */
export function createPostgresSession(q: Queryable): SqlSession {
  const runner = createPostgresRunner(q)
  return { run: (procedure) => runAsync(procedure(runner)) }
}
