import type { ValueBinding } from './record-rows.ts'

/**
 * The one way both adapters share code (reads, writes, undo, keys, webhooks, the portal): a statement sequence written
 * once for a synchronous driver (better-sqlite3, whose transactions must not await) and an asynchronous one (pg). A
 * routine is a generator: it yields each adapter call's answer (a value or a promise) and resumes with the value;
 * `runSync` drives it on SQLite (inside a transaction where it must be atomic), `runAsync` awaits each answer on
 * PostgreSQL. An executor (SqlExecutor) is where an adapter runs a routine: a statement at a time or in a transaction.
 */

/** An answer now (SQLite) or later (PostgreSQL). */
export type Maybe<T> = T | Promise<T>

/** A shared write path: yields adapter answers, returns `R`. */
export type SqlRoutine<R> = Generator<unknown, R, unknown>

/** Statements by their text (`?` placeholders, numbered by the PostgreSQL runner), run on one connection. */
export interface SqlRunner extends ValueBinding {
  /** The rows a statement returns. */
  rows<T>(sql: string, params?: readonly unknown[]): Maybe<T[]>
  /** Runs a statement for its effect; answers how many rows it changed. */
  run(sql: string, params?: readonly unknown[]): Maybe<number>
}

/** A runner answering at once (SQLite). */
export interface SyncSqlRunner extends SqlRunner {
  rows<T>(sql: string, params?: readonly unknown[]): T[]
  run(sql: string, params?: readonly unknown[]): number
}

/** A runner answering with promises (PostgreSQL). */
export interface AsyncSqlRunner extends SqlRunner {
  rows<T>(sql: string, params?: readonly unknown[]): Promise<T[]>
  run(sql: string, params?: readonly unknown[]): Promise<number>
}

/** Inside a routine: `yield* awaited(x)` is x's value, x being an answer of either kind. */
export function* awaited<T>(answer: Maybe<T>): Generator<Maybe<T>, T, unknown> {
  return (yield answer) as T
}

/** Runs a routine whose every answer is a value (SQLite), synchronously. */
export function runSync<R>(routine: SqlRoutine<R>): R {
  let step = routine.next()
  while (!step.done) {
    if (step.value instanceof Promise) throw new Error('store: an asynchronous answer in a synchronous routine')
    step = routine.next(step.value)
  }
  return step.value
}

/** Runs a routine awaiting each answer (PostgreSQL); a rejected answer is thrown inside the routine. */
export async function runAsync<R>(routine: SqlRoutine<R>): Promise<R> {
  let step = routine.next()
  while (!step.done) {
    let value: unknown
    try {
      value = await step.value
    } catch (error) {
      step = routine.throw(error)
      continue
    }
    step = routine.next(value)
  }
  return step.value
}

/** A routine over the runner it is given: what an executor runs on a connection of its choosing. */
export type SqlProcedure<R> = (sql: SqlRunner) => SqlRoutine<R>

/** Where procedures run a statement at a time: a connection, or a pool's connections. */
export interface SqlSession {
  /** Runs each statement of `procedure` on its own (one statement: atomic by itself). */
  run<R>(procedure: SqlProcedure<R>): Promise<R>
}

/**
 * Where an adapter runs procedures: SQLite on its one connection, synchronously; PostgreSQL on a pool (the store's, or
 * one kept for some writes), awaiting each answer.
 */
export interface SqlExecutor extends SqlSession {
  /**
   * Runs `procedure` in one transaction: all of its writes or none (SQLite: BEGIN IMMEDIATE, holding the write lock
   * throughout; PostgreSQL: on one client of the pool, READ COMMITTED, rolled back on a throw).
   */
  transaction<R>(procedure: SqlProcedure<R>): Promise<R>
}

/** The rows of one statement. */
export const rowsOf =
  <T = Record<string, unknown>>(text: string, params: readonly unknown[] = []): SqlProcedure<T[]> =>
  (sql) =>
    awaited(sql.rows<T>(text, params))

/** How many rows one statement changed. */
export const changesOf =
  (text: string, params: readonly unknown[] = []): SqlProcedure<number> =>
  (sql) =>
    awaited(sql.run(text, params))
