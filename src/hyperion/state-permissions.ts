import type { SnapshotReader } from '../store/index.ts'
import type { AccountPermission } from '../store/index.ts'

/**
 * Hyperion's permission reads (get_key_accounts, get_controlled_accounts, get_links) from the store's permission state
 * at head. The store holds every permission SHiP reported: its first block's full state (a snapshot start included)
 * and every change since, so an account created before the store's first block is found as long as that state was
 * read. Hyperion reads its own history of `updateauth`/`newaccount` actions instead and misses such accounts.
 */

/** One permission holding a key: what `get_key_accounts?details=true` lists. */
export interface KeyPermission {
  readonly owner: string
  readonly name: string
  readonly weight: number
  readonly threshold: number
}

/**
 * The accounts whose permissions hold `publicKey` (PUB_K1 form) at head, each once, by name; with each permission, the
 * key's weight in it and its threshold.
 */
export async function keyAccountsAt(
  reader: Pick<SnapshotReader, 'keyAccounts' | 'permissions'>,
  args: { publicKey: string; blockNum: number },
): Promise<{ accounts: string[]; permissions: KeyPermission[] }> {
  const found = await reader.keyAccounts({ publicKey: args.publicKey, blockNum: args.blockNum })
  const accounts = [...new Set(found.map((f) => f.account))]
  const permissions: KeyPermission[] = []
  for (const account of accounts) {
    const held = await reader.permissions({ account, blockNum: args.blockNum })
    for (const { permission } of found.filter((f) => f.account === account)) {
      const p = held.find((h) => h.name === permission)
      const key = p?.keys.find((k) => k.key === args.publicKey)
      if (p && key) permissions.push({ owner: account, name: permission, weight: key.weight, threshold: p.threshold })
    }
  }
  return { accounts, permissions }
}

/** nodeos's `permissions[]` of get_account, from the store's permissions of an account. */
export function chainPermissions(permissions: readonly AccountPermission[]) {
  return permissions.map((p) => ({
    perm_name: p.name,
    parent: p.parent,
    required_auth: {
      threshold: p.threshold,
      keys: p.keys.map((k) => ({ key: k.key, weight: k.weight })),
      accounts: p.accounts.map((a) => ({ permission: a.permission, weight: a.weight })),
      waits: [],
    },
  }))
}

/** A link as `get_links` answers it. */
export interface HyperionLink {
  readonly block_num: number
  readonly timestamp: string
  readonly account: string
  readonly permission: string
  readonly code: string
  readonly action: string
}
