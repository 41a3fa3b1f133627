import { ABI, PrivateKey } from '@wharfkit/antelope'
import { decodeAbiBinary, encodeAbiBinary, toHex } from '../../antelope/index.ts'
import { rawdb } from '../contracts/rawdb.ts'
import { token } from '../contracts/token.ts'
import type { Chain } from './chain.ts'
import { DEV_PRIVATE_KEY, keyAuthority } from './genesis.ts'
import { signTransaction, type ActionToSign } from './sign.ts'

export const GENESIS_USERS = ['alice', 'bob', 'carol'] as const
const EOSIO_ACTIVE = [{ actor: 'eosio', permission: 'active' }]

/** The ABI of an account as the chain holds it now. */
export function chainAbiOf(chain: Chain, account: string): ABI | undefined {
  if (account === 'eosio') return chain.systemContract.abi
  const bytes = chain.state.get('account', account)?.abi
  const decoded = bytes && bytes.length > 0 ? decodeAbiBinary(bytes) : undefined
  return decoded?.ok ? decoded.value : undefined
}

/**
 * Signs actions with the development key and pushes them. TAPOS references LIB, as wharfkit does,
 * so the transaction stays valid (and is re-included) when a fork replaces reversible blocks.
 */
export function pushSigned(
  chain: Chain,
  actions: readonly ActionToSign[],
  options: { delaySec?: number; nonce?: number } = {},
) {
  const lib = chain.block(chain.lib.blockNum)!
  const input = signTransaction({
    chainId: chain.chainId,
    ref: { blockNum: lib.num, blockId: lib.id, slot: Math.max(lib.slot, chain.head.slot) },
    actions,
    abiOf: (account) =>
      account === 'eosio.token' ? token.abi : account === 'rawdb' ? rawdb.abi : chainAbiOf(chain, account),
    keys: [PrivateKey.from(DEV_PRIVATE_KEY)],
    ...options,
  })
  return chain.pushTransaction(input)
}

/**
 * Boots a fresh chain in block 2 with real signed transactions: the genesis accounts, eosio.token
 * with EOS (max 10,000,000,000.0000, 1,000,000,000.0000 issued to eosio, 1,000.0000 to each user)
 * and rawdb (whose active permission includes rawdb@eosio.code, so it can send inline actions).
 */
export function bootChain(chain: Chain): void {
  const newaccount = (name: string) => ({
    account: 'eosio',
    name: 'newaccount',
    authorization: EOSIO_ACTIVE,
    data: { creator: 'eosio', name, owner: keyAuthority(), active: keyAuthority() },
  })
  pushSigned(chain, ['eosio.token', ...GENESIS_USERS, 'rawdb'].map(newaccount))
  for (const contract of [token, rawdb]) {
    const auth = [{ actor: contract.name, permission: 'active' }]
    pushSigned(chain, [
      {
        account: 'eosio',
        name: 'setcode',
        authorization: auth,
        data: { account: contract.name, vmtype: 0, vmversion: 0, code: toHex(contract.markerCode) },
      },
      {
        account: 'eosio',
        name: 'setabi',
        authorization: auth,
        data: { account: contract.name, abi: toHex(encodeAbiBinary(contract.abi)) },
      },
    ])
  }
  const rawdbActive = {
    ...keyAuthority(),
    accounts: [{ permission: { actor: 'rawdb', permission: 'eosio.code' }, weight: 1 }],
  }
  pushSigned(chain, [
    {
      account: 'eosio',
      name: 'updateauth',
      authorization: [{ actor: 'rawdb', permission: 'active' }],
      data: { account: 'rawdb', permission: 'active', parent: 'owner', auth: rawdbActive },
    },
  ])
  pushSigned(chain, [
    {
      account: 'eosio.token',
      name: 'create',
      authorization: [{ actor: 'eosio.token', permission: 'active' }],
      data: { issuer: 'eosio', maximum_supply: '10000000000.0000 EOS' },
    },
  ])
  pushSigned(chain, [
    {
      account: 'eosio.token',
      name: 'issue',
      authorization: EOSIO_ACTIVE,
      data: { to: 'eosio', quantity: '1000000000.0000 EOS', memo: 'genesis' },
    },
  ])
  pushSigned(
    chain,
    GENESIS_USERS.map((to) => ({
      account: 'eosio.token',
      name: 'transfer',
      authorization: EOSIO_ACTIVE,
      data: { from: 'eosio', to, quantity: '1000.0000 EOS', memo: 'genesis' },
    })),
  )
  chain.produceBlock()
}
