import type { SnapshotSource } from '../store/index.ts'
import { resolveHeight, type ReadHeight } from './height.ts'
import type { HeightArgs } from './service.ts'

/** dfuse's `/v0/state/permission_links` answer: the header fields and the links in force, by contract then action. */
export type PermissionLinksAnswer = ReadHeight['header'] & { linked_permissions: { contract: string; action: string; permission_name: string }[] }

/** The permission links of `account` at the height (an empty `action` links the whole contract), from one snapshot. */
export function readPermissionLinks(store: SnapshotSource, args: HeightArgs & { account: string }): Promise<PermissionLinksAnswer> {
  return store.snapshot(async (reader) => {
    const height = await resolveHeight(reader, args)
    const links = await reader.permissionLinks({ account: args.account, blockNum: height.blockNum })
    return { ...height.header, linked_permissions: links.map((l) => ({ contract: l.contract, action: l.action, permission_name: l.permission })) }
  })
}
