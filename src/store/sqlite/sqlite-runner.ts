import type Database from 'better-sqlite3'
import { runSync, type SqlExecutor, type SqlProcedure, type SyncSqlRunner } from '../sql-routine.ts'

/** The shared statements on a SQLite connection: each text prepared once, on first use; answers are values. */
export function createSqliteRunner(db: Database.Database): SyncSqlRunner {
  const prepared = new Map<string, Database.Statement>()
  const statement = (sql: string) => {
    let s = prepared.get(sql)
    if (!s) prepared.set(sql, (s = db.prepare(sql)))
    return s
  }
  return {
    rows: <T>(sql: string, params: readonly unknown[] = []) => statement(sql).all(...params) as T[],
    run: (sql, params = []) => statement(sql).run(...params).changes,
    bool: (value) => (value ? 1 : 0),
    // A view over the same memory: the driver binds Buffers only, and a copy per blob would cost.
    bytes: (value) => Buffer.from(value.buffer, value.byteOffset, value.byteLength),
    decimal: (value) => value,
  }
}

/**
 * Procedures on the SQLite connection of `sql`, run synchronously: nothing else runs on the connection meanwhile. A
 * transaction begins IMMEDIATE: it holds the write lock from its first read, so another process's write cannot come
 * between its reads and its writes.
 */
export function createSqliteExecutor(db: Database.Database, sql: SyncSqlRunner): SqlExecutor {
  const inTransaction = db.transaction((procedure: SqlProcedure<unknown>) => runSync(procedure(sql)))
  return {
    run: async (procedure) => runSync(procedure(sql)),
    transaction: async <R>(procedure: SqlProcedure<R>) => inTransaction.immediate(procedure) as R,
  }
}
