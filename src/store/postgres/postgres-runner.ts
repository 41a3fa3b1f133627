import { numbered } from '../common-sql.ts'
import type { AsyncSqlRunner } from '../sql-routine.ts'
import type { Queryable } from './column-insert.ts'

/** Shared statement texts with their placeholders numbered, each numbered once. */
const texts = new Map<string, string>()
const numberedOnce = (sql: string) => {
  let text = texts.get(sql)
  if (text === undefined) texts.set(sql, (text = numbered(sql)))
  return text
}

/** The shared statements on a PostgreSQL pool or client: answers are promises. */
export function createPostgresRunner(q: Queryable): AsyncSqlRunner {
  return {
    rows: async <T>(sql: string, params: readonly unknown[] = []) =>
      (await q.query(numberedOnce(sql), params as unknown[])).rows as T[],
    run: (sql, params = []) => q.query(numberedOnce(sql), params as unknown[]),
    bool: (value) => value,
    // pg binds a Uint8Array (alone or in an array) as bytea from its own memory: a copy per blob would cost.
    bytes: (value) => value,
    decimal: (value) => value.toString(),
  }
}
