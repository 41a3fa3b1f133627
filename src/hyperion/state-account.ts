import type { SnapshotReader } from '../store/index.ts'
import { chainPermissions } from './state-permissions.ts'

/**
 * `get_account`'s `account`: nodeos's own get_account when the API has a chain node (what Hyperion embeds), else one
 * built from the store (name, head and permissions: what the store knows; resources and staking are the chain's).
 */

/** What nodeos answered: the account, or that it does not know it; undefined when it could not be asked. */
export type ChainAccount = { readonly found: true; readonly account: unknown } | { readonly found: false }

/** nodeos's `/v1/chain/get_account` of `account`; undefined when the node is unreachable, slow or answers oddly. */
export async function chainAccount(
  chainApi: string,
  timeoutMs: number,
  account: string,
): Promise<ChainAccount | undefined> {
  try {
    const response = await fetch(`${chainApi}/v1/chain/get_account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account_name: account }),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const body = (await response.json()) as unknown
    if (response.ok && typeof body === 'object' && body !== null) return { found: true, account: body }
    // nodeos answers an unknown account with an error body (500, `unknown key`): the account does not exist.
    if (typeof body === 'object' && body !== null && 'error' in body) return { found: false }
    return undefined
  } catch {
    return undefined
  }
}

/** The account as the store knows it at `blockNum`; undefined when it holds no permission (no such account). */
export async function storeAccount(
  reader: Pick<SnapshotReader, 'permissions'>,
  args: { account: string; blockNum: number },
): Promise<Record<string, unknown> | undefined> {
  const permissions = await reader.permissions({ account: args.account, blockNum: args.blockNum })
  if (permissions.length === 0) return undefined
  return { account_name: args.account, head_block_num: args.blockNum, permissions: chainPermissions(permissions) }
}
