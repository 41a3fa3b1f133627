import Database from 'better-sqlite3'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { StoreNotFoundError, StoreSchemaVersionError } from '../errors.ts'
import { SECRET_NAMES } from '../types.ts'
import {
  ADDED_COLUMNS,
  BACKFILL_FIRST_BLOCK,
  SQLITE_SCHEMA,
  SQLITE_SCHEMA_VERSION,
  SQLITE_UPGRADABLE_VERSIONS,
} from './schema.ts'
import { ROW_VERSIONS_BORN } from '../versioned-tables.ts'
import { CONTROLLERS_INDEX, TOKEN_HOLDINGS_INDEX } from '../holdings-sql.ts'
import { API_KEYS_ACCOUNT_INDEX } from '../api-keys-sql.ts'

/**
 * Opens the SQLite file of a store. A writer creates the schema and its secrets, or upgrades a
 * store of the previous version in place; a reader (`readOnly`) opens an existing file of this
 * version without writing anything. Other processes may hold the file at the same time (the
 * indexer, `antler keys`, the API): a locked database is waited for up to 5 s.
 */
export function openSqliteDatabase(path: string, readOnly: boolean): Database.Database {
  if (readOnly && (path === ':memory:' || !existsSync(path)))
    throw StoreNotFoundError({ store: path, reason: 'does not exist' })
  if (!readOnly && path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, readOnly ? { readonly: true, fileMustExist: true } : {})
  try {
    db.pragma('busy_timeout = 5000')
    // The hot B-trees (transactions by id, row versions, postings) outgrow SQLite's 2 MB default
    // page cache within a few hundred thousand actions.
    db.pragma('cache_size = -131072')
    if (readOnly) checkVersion(db, path)
    else {
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = NORMAL')
      // IMMEDIATE: concurrent first opens take turns, so exactly one creates the schema and its secrets.
      db.transaction(() => createSchema(db, path)).immediate()
    }
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

const versionOf = (db: Database.Database) =>
  (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined)?.value

function checkVersion(db: Database.Database, path: string): void {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get())
    throw StoreNotFoundError({ store: path, reason: 'holds no Antler store' })
  const found = versionOf(db)
  if (found === undefined) throw StoreNotFoundError({ store: path, reason: 'holds no Antler store' })
  if (Number(found) !== SQLITE_SCHEMA_VERSION)
    throw StoreSchemaVersionError({
      store: path,
      found,
      expected: SQLITE_SCHEMA_VERSION,
      upgradable: SQLITE_UPGRADABLE_VERSIONS.includes(Number(found)),
    })
}

function createSchema(db: Database.Database, path: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
  const found = versionOf(db)
  if (
    found !== undefined &&
    Number(found) !== SQLITE_SCHEMA_VERSION &&
    !SQLITE_UPGRADABLE_VERSIONS.includes(Number(found))
  ) {
    throw StoreSchemaVersionError({ store: path, found, expected: SQLITE_SCHEMA_VERSION, upgradable: false })
  }
  db.exec(SQLITE_SCHEMA)
  // SQLite has no ADD COLUMN IF NOT EXISTS: tables an older version created lack them.
  for (const { table, column, type } of ADDED_COLUMNS) {
    const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[]
    if (!columns.includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`)
  }
  // In this transaction: an interrupted upgrade leaves the store at its old version, unchanged.
  if (found !== undefined && Number(found) < 6) backfillFirstBlock(db)
  db.exec(ROW_VERSIONS_BORN)
  db.exec(TOKEN_HOLDINGS_INDEX)
  db.exec(CONTROLLERS_INDEX)
  db.exec(API_KEYS_ACCOUNT_INDEX)
  const insertSecret = db.prepare('INSERT OR IGNORE INTO secrets VALUES (?, ?)')
  for (const name of SECRET_NAMES) insertSecret.run(name, randomBytes(32))
  if (found !== String(SQLITE_SCHEMA_VERSION))
    db.prepare("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)").run(String(SQLITE_SCHEMA_VERSION))
}

/** Version 6's `first_block` on the versions that are or may become current (schema.ts BACKFILL_FIRST_BLOCK). */
function backfillFirstBlock(db: Database.Database): void {
  db.prepare(BACKFILL_FIRST_BLOCK.current).run()
  const lib = Number((db.prepare("SELECT value FROM meta WHERE key = 'lib'").pluck().get() as string | undefined) ?? 0)
  const reopenable = db.prepare(BACKFILL_FIRST_BLOCK.reopenable)
  for (const key of db.prepare(BACKFILL_FIRST_BLOCK.keysAboveLib).all(lib) as Record<string, string>[])
    reopenable.run({ ...key, lib })
}
