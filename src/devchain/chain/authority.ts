import type { StateDb } from '../state/state-db.ts'
import type { Authority } from '../state/rows.ts'
import type { PermissionLevel } from './traces.ts'

const MAX_AUTHORITY_DEPTH = 6

export function permissionKey(owner: string, name: string): string {
  return `${owner}@${name}`
}

export function linkKey(account: string, code: string, messageType: string): string {
  return `${account}\u0000${code}\u0000${messageType}`
}

/**
 * Checks authorities against what a transaction provides: the public keys recovered from its
 * signatures, and permissions granted outright (e.g. `contract@eosio.code` for inline actions).
 * Records which keys were needed, so irrelevant signatures can be refused.
 */
export class AuthorityChecker {
  readonly usedKeys = new Set<string>()

  constructor(
    private readonly state: StateDb,
    private readonly keys: ReadonlySet<string>,
    private readonly grantedPermissions: ReadonlySet<string> = new Set(),
  ) {}

  /** Whether `level` is satisfied. */
  satisfies(level: PermissionLevel, depth = 0): boolean {
    if (this.grantedPermissions.has(permissionKey(level.actor, level.permission))) return true
    const permission = this.state.get('permission', permissionKey(level.actor, level.permission))
    if (!permission) return false
    return this.authoritySatisfied(permission.auth, depth)
  }

  private authoritySatisfied(auth: Authority, depth: number): boolean {
    let weight = 0
    const used: string[] = []
    for (const k of auth.keys) {
      if (this.keys.has(k.key)) {
        weight += k.weight
        used.push(k.key)
      }
    }
    if (weight < auth.threshold && depth < MAX_AUTHORITY_DEPTH) {
      for (const a of auth.accounts) {
        if (weight >= auth.threshold) break
        if (this.satisfies(a.permission, depth + 1)) weight += a.weight
      }
    }
    if (weight < auth.threshold) return false
    for (const key of used) this.usedKeys.add(key)
    return true
  }
}

/**
 * The permission an action needs from `actor` (`permission_link`, else `active`), and whether the
 * declared permission reaches it: it must be that permission or one of its ancestors.
 */
export function declaredPermissionSuffices(
  state: StateDb,
  level: PermissionLevel,
  code: string,
  action: string,
): boolean {
  const linked =
    state.get('permission_link', linkKey(level.actor, code, action)) ??
    state.get('permission_link', linkKey(level.actor, code, ''))
  let required = linked?.requiredPermission ?? 'active'
  if (required === 'eosio.any') return true
  for (let hops = 0; hops < 16; hops++) {
    if (required === level.permission) return true
    if (required === 'owner' || required === '') return false
    const permission = state.get('permission', permissionKey(level.actor, required))
    if (!permission) return false
    required = permission.parent
  }
  return false
}
