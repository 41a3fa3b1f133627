import { PublicKey } from '@wharfkit/antelope'
import { blockSlotToMs, formatNodeosTime, sha256, symbolCodeToBigInt, toHex } from '../../antelope/index.ts'
import type { Chain } from '../chain/chain.ts'
import type { AccountRow } from '../state/rows.ts'
import { formatAsset, readAssetRow } from '../contracts/asset-format.ts'
import { chainErrors } from '../errors.ts'
import { contractRowKey } from '../state/state-db.ts'
import { field, isName, type ChainRouteContext } from './request.ts'

/** An account's row, or nodeos's "unknown key" account query error. */
export function accountOf(chain: Chain, name: string): AccountRow {
  const account = chain.state.get('account', name)
  if (!account) throw chainErrors.accountQuery(`unknown key (eosio::chain::name): ${name}`)
  return account
}

/** Accounts: `get_abi`, `get_raw_abi` and `get_account` (permissions, linked actions, the EOS balance). */
export function accountRoutes({ chain, route, abiOf }: ChainRouteContext): void {
  route('/v1/chain/get_abi', (body) => {
    const name = field(body, 'account_name', isName, 'an account name')
    accountOf(chain, name)
    const abi = abiOf(name)
    return abi ? { account_name: name, abi: JSON.parse(JSON.stringify(abi)) } : { account_name: name }
  })
  route('/v1/chain/get_raw_abi', (body) => {
    const name = field(body, 'account_name', isName, 'an account name')
    const account = accountOf(chain, name)
    const codeHash = chain.state.get('account_metadata', name)?.codeHash ?? '0'.repeat(64)
    return {
      account_name: name,
      code_hash: codeHash,
      abi_hash: account.abi.length ? toHex(sha256(account.abi)) : '0'.repeat(64),
      abi: Buffer.from(account.abi).toString('base64'),
    }
  })
  route('/v1/chain/get_account', (body) => accountJson(chain, field(body, 'account_name', isName, 'an account name')))
}

/** `get_account`'s answer; resource fields are unlimited (-1) or null, as on a chain without limits. */
function accountJson(chain: Chain, name: string) {
  const account = accountOf(chain, name)
  const meta = chain.state.get('account_metadata', name)
  const permissions = [...chain.state.rows('permission')]
    .filter(([, p]) => p.owner === name)
    .map(([, p]) => ({
      perm_name: p.name,
      parent: p.parent,
      required_auth: {
        threshold: p.auth.threshold,
        keys: p.auth.keys.map((k) => ({ key: PublicKey.from(k.key).toLegacyString(), weight: k.weight })),
        accounts: p.auth.accounts,
        waits: p.auth.waits,
      },
      linked_actions: [...chain.state.rows('permission_link')]
        .filter(([, l]) => l.account === name && l.requiredPermission === p.name)
        .map(([, l]) => (l.messageType ? { account: l.code, action: l.messageType } : { account: l.code })),
    }))
    .sort((a, b) => (a.perm_name < b.perm_name ? -1 : 1))
  const balance = chain.state.get(
    'contract_row',
    contractRowKey('eosio.token', name, 'accounts', symbolCodeToBigInt('EOS')),
  )
  const limit = {
    used: 0,
    available: -1,
    max: -1,
    last_usage_update_time: formatNodeosTime(blockSlotToMs(chain.head.slot)),
    current_used: 0,
  }
  return {
    account_name: name,
    head_block_num: chain.head.num,
    head_block_time: formatNodeosTime(blockSlotToMs(chain.head.slot)),
    privileged: meta?.privileged ?? false,
    last_code_update: formatNodeosTime(Number((meta?.lastCodeUpdateUs ?? 0n) / 1000n)),
    created: formatNodeosTime(blockSlotToMs(account.creationSlot)),
    ...(balance ? { core_liquid_balance: formatAsset(readAssetRow(balance.value)) } : {}),
    ram_quota: -1,
    net_weight: -1,
    cpu_weight: -1,
    net_limit: limit,
    cpu_limit: limit,
    ram_usage: Number(chain.state.get('resource_usage', name)?.ramUsage ?? 0n),
    permissions,
    total_resources: null,
    self_delegated_bandwidth: null,
    refund_request: null,
    voter_info: null,
    rex_info: null,
    subjective_cpu_bill_limit: limit,
    eosio_any_linked_actions: [],
  }
}
