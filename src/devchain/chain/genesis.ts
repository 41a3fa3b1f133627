import { ABI, PrivateKey } from '@wharfkit/antelope'
import { encodeAbiBinary } from '../../antelope/index.ts'
import { SYSTEM_ABI } from '../contracts/system.ts'
import type { StateDb } from '../state/state-db.ts'
import type { Authority } from '../state/rows.ts'
import { permissionKey } from './authority.ts'

/** The well-known Antelope development key every genesis account uses. */
export const DEV_PRIVATE_KEY = '5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3'
export const DEV_PUBLIC_KEY = 'EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV'
/** The same key as wharfkit prints it (`PUB_K1_…`), the form the state stores. */
export const DEV_PUBLIC_KEY_K1 = PrivateKey.from(DEV_PRIVATE_KEY).toPublic().toString()

export function keyAuthority(key = DEV_PUBLIC_KEY_K1): Authority {
  return { threshold: 1, keys: [{ key, weight: 1 }], accounts: [], waits: [] }
}

/** Producer account names: producera, producerb, … */
export function producerNames(count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) =>
      `producer${String.fromCharCode(97 + (i % 26))}${i >= 26 ? String.fromCharCode(97 + Math.floor(i / 26)) : ''}`,
  )
}

/** Writes the genesis state (before block 1): `eosio` with the system ABI, and the producer accounts. */
export function writeGenesisState(state: StateDb, args: { genesisSlot: number; producers: readonly string[] }): void {
  const systemAbi = encodeAbiBinary(ABI.from(SYSTEM_ABI))
  const accounts = ['eosio', ...args.producers]
  for (const name of accounts) {
    state.put('account', name, {
      name,
      creationSlot: args.genesisSlot,
      abi: name === 'eosio' ? systemAbi : new Uint8Array(0),
    })
    state.put('account_metadata', name, {
      name,
      privileged: name === 'eosio',
      lastCodeUpdateUs: 0n,
      codeHash: undefined,
    })
    state.put('permission', permissionKey(name, 'owner'), {
      owner: name,
      name: 'owner',
      parent: '',
      lastUpdatedUs: 0n,
      auth: keyAuthority(),
    })
    state.put('permission', permissionKey(name, 'active'), {
      owner: name,
      name: 'active',
      parent: 'owner',
      lastUpdatedUs: 0n,
      auth: keyAuthority(),
    })
    state.put('resource_limits', name, { owner: name, netWeight: -1n, cpuWeight: -1n, ramBytes: -1n })
  }
  state.put('_account_sequence', 'eosio', { recvSequence: 0n, authSequence: 0n, codeSequence: 0, abiSequence: 1 })
}
