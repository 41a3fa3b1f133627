import { awaited, type SqlRoutine, type SqlRunner } from './sql-routine.ts'
import type { BlockBatch } from './types.ts'

/**
 * Each statement pair closes an entity's current version at the block (parameters: block, then the entity's key)
 * and inserts the block's version.
 */
const CLOSE_ABI = 'UPDATE abi_versions SET valid_to = ? WHERE account = ? AND valid_to IS NULL'
const INSERT_ABI = 'INSERT INTO abi_versions VALUES (?, ?, NULL, ?)'
const CLOSE_PERMISSION = 'UPDATE permission_versions SET valid_to = ? WHERE owner = ? AND name = ? AND valid_to IS NULL'
const INSERT_PERMISSION = 'INSERT INTO permission_versions VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)'
const CLOSE_KEYS = 'UPDATE key_versions SET valid_to = ? WHERE owner = ? AND permission = ? AND valid_to IS NULL'
/** A key a permission lists twice is one version (same key, owner, permission and block). */
const INSERT_KEY = 'INSERT INTO key_versions VALUES (?, ?, ?, ?, NULL) ON CONFLICT DO NOTHING'
const CLOSE_LINK =
  'UPDATE link_versions SET valid_to = ? WHERE account = ? AND code = ? AND type = ? AND valid_to IS NULL'
const INSERT_LINK = 'INSERT INTO link_versions VALUES (?, ?, ?, ?, NULL, ?)'

/** The ABI, permission (with its keys) and link versions block `blockNum` writes, in the caller's transaction. */
export function* writeVersionChanges(
  sql: SqlRunner,
  blockNum: number,
  { abis, permissions, links }: Pick<BlockBatch, 'abis' | 'permissions' | 'links'>,
): SqlRoutine<void> {
  for (const a of abis) {
    yield* awaited(sql.run(CLOSE_ABI, [blockNum, a.account]))
    yield* awaited(sql.run(INSERT_ABI, [a.account, blockNum, Buffer.from(a.abi)]))
  }
  for (const p of permissions) {
    yield* awaited(sql.run(CLOSE_PERMISSION, [blockNum, p.owner, p.name]))
    const keys = JSON.stringify(p.keys)
    const accounts = JSON.stringify(p.accounts)
    const row = [p.owner, p.name, blockNum, p.parent, p.threshold, keys, accounts, sql.bool(p.removed)]
    yield* awaited(sql.run(INSERT_PERMISSION, row))
    yield* awaited(sql.run(CLOSE_KEYS, [blockNum, p.owner, p.name]))
    if (!p.removed) for (const k of p.keys) yield* awaited(sql.run(INSERT_KEY, [k.key, p.owner, p.name, blockNum]))
  }
  for (const l of links) {
    yield* awaited(sql.run(CLOSE_LINK, [blockNum, l.account, l.code, l.messageType]))
    yield* awaited(sql.run(INSERT_LINK, [l.account, l.code, l.messageType, blockNum, l.requiredPermission ?? null]))
  }
}
