import { PublicKey } from '@wharfkit/antelope'
import { isValidName, sha256, toHex } from '../../antelope/index.ts'
import type { ApplyContext, NativeContract } from '../chain/apply-context.ts'
import { linkKey, permissionKey } from '../chain/authority.ts'
import { chainErrors, check } from '../errors.ts'
import type { Authority } from '../state/rows.ts'
import { defineAbi, defineNativeContract } from './native.ts'

/** The `eosio` account's native actions, as nodeos implements them in eosio_contract.cpp. */

export const SYSTEM_ABI = defineAbi({
  structs: {
    permission_level: [
      ['actor', 'name'],
      ['permission', 'name'],
    ],
    key_weight: [
      ['key', 'public_key'],
      ['weight', 'uint16'],
    ],
    permission_level_weight: [
      ['permission', 'permission_level'],
      ['weight', 'uint16'],
    ],
    wait_weight: [
      ['wait_sec', 'uint32'],
      ['weight', 'uint16'],
    ],
    authority: [
      ['threshold', 'uint32'],
      ['keys', 'key_weight[]'],
      ['accounts', 'permission_level_weight[]'],
      ['waits', 'wait_weight[]'],
    ],
    producer_key: [
      ['producer_name', 'name'],
      ['block_signing_key', 'public_key'],
    ],
    producer_schedule: [
      ['version', 'uint32'],
      ['producers', 'producer_key[]'],
    ],
    block_header: [
      ['timestamp', 'uint32'],
      ['producer', 'name'],
      ['confirmed', 'uint16'],
      ['previous', 'checksum256'],
      ['transaction_mroot', 'checksum256'],
      ['action_mroot', 'checksum256'],
      ['schedule_version', 'uint32'],
      ['new_producers', 'producer_schedule?'],
    ],
    newaccount: [
      ['creator', 'name'],
      ['name', 'name'],
      ['owner', 'authority'],
      ['active', 'authority'],
    ],
    updateauth: [
      ['account', 'name'],
      ['permission', 'name'],
      ['parent', 'name'],
      ['auth', 'authority'],
    ],
    deleteauth: [
      ['account', 'name'],
      ['permission', 'name'],
    ],
    linkauth: [
      ['account', 'name'],
      ['code', 'name'],
      ['type', 'name'],
      ['requirement', 'name'],
    ],
    unlinkauth: [
      ['account', 'name'],
      ['code', 'name'],
      ['type', 'name'],
    ],
    setcode: [
      ['account', 'name'],
      ['vmtype', 'uint8'],
      ['vmversion', 'uint8'],
      ['code', 'bytes'],
    ],
    setabi: [
      ['account', 'name'],
      ['abi', 'bytes'],
    ],
    canceldelay: [
      ['canceling_auth', 'permission_level'],
      ['trx_id', 'checksum256'],
    ],
    onblock: [['header', 'block_header']],
  },
  actions: [
    'newaccount',
    'updateauth',
    'deleteauth',
    'linkauth',
    'unlinkauth',
    'setcode',
    'setabi',
    'canceldelay',
    'onblock',
  ],
})

/** Account RAM nodeos bills for an account and its two permissions, before authority contents. */
const ACCOUNT_RAM_BYTES = 2048n + 2n * 208n
const SETCODE_RAM_MULTIPLIER = 10n

function normalizeAuthority(auth: Authority): Authority {
  const keys = auth.keys.map((k) => ({ key: PublicKey.from(k.key).toString(), weight: k.weight }))
  check(auth.threshold > 0, 'Invalid authority')
  const total =
    keys.reduce((s, k) => s + k.weight, 0) +
    auth.accounts.reduce((s, a) => s + a.weight, 0) +
    auth.waits.reduce((s, w) => s + w.weight, 0)
  if (total < auth.threshold)
    throw chainErrors.actionValidate('Invalid authority: the weights can never reach the threshold')
  return { threshold: auth.threshold, keys, accounts: auth.accounts, waits: auth.waits }
}

function authorityBytes(auth: Authority): bigint {
  return BigInt(8 + auth.keys.length * 42 + auth.accounts.length * 18 + auth.waits.length * 6)
}

export function createSystemContract(contracts: ReadonlyMap<string, NativeContract>): NativeContract {
  const contractNames = () => [...contracts.values()].map((c) => c.name).join(', ')

  function putPermission(ctx: ApplyContext, owner: string, name: string, parent: string, auth: Authority): void {
    ctx.state.put('permission', permissionKey(owner, name), {
      owner,
      name,
      parent,
      lastUpdatedUs: ctx.blockTimeUs,
      auth: normalizeAuthority(auth),
    })
  }

  function apply(ctx: ApplyContext): void {
    const abi = system.abi
    const state = ctx.state
    switch (ctx.act.name) {
      case 'newaccount': {
        const a = ctx.decode<{ creator: string; name: string; owner: Authority; active: Authority }>(abi, 'newaccount')
        ctx.requireAuth(a.creator)
        if (!isValidName(a.name) || a.name.length === 0)
          throw chainErrors.actionValidate(`account names can only be 12 chars long`)
        if (state.has('account', a.name))
          throw chainErrors.accountNameExists(`Cannot create account named ${a.name}, as that name is already taken`)
        if (a.name.startsWith('eosio.') && a.creator !== 'eosio')
          throw chainErrors.actionValidate("only privileged accounts can have names that start with 'eosio.'")
        state.put('account', a.name, { name: a.name, creationSlot: ctx.blockSlot, abi: new Uint8Array(0) })
        state.put('account_metadata', a.name, {
          name: a.name,
          privileged: false,
          lastCodeUpdateUs: 0n,
          codeHash: undefined,
        })
        putPermission(ctx, a.name, 'owner', '', a.owner)
        putPermission(ctx, a.name, 'active', 'owner', a.active)
        state.put('resource_limits', a.name, { owner: a.name, netWeight: -1n, cpuWeight: -1n, ramBytes: -1n })
        ctx.addRam(a.name, ACCOUNT_RAM_BYTES + authorityBytes(a.owner) + authorityBytes(a.active))
        return
      }
      case 'updateauth': {
        const a = ctx.decode<{ account: string; permission: string; parent: string; auth: Authority }>(
          abi,
          'updateauth',
        )
        ctx.requireAuth(a.account)
        check(isValidName(a.permission) && a.permission !== '', 'Invalid permission name')
        if (a.permission === 'owner') check(a.parent === '', "Cannot set an owner permission's parent")
        else {
          check(a.parent !== '', 'Only owner permission can have empty parent')
          check(
            state.has('permission', permissionKey(a.account, a.parent)),
            `parent permission ${a.parent} does not exist`,
          )
        }
        check(
          a.permission !== 'eosio.any' && a.permission !== 'eosio.code',
          'Cannot create a permission with a reserved name',
        )
        const existing = state.get('permission', permissionKey(a.account, a.permission))
        if (existing) check(existing.parent === a.parent, 'Changing parent authority is not currently supported')
        else ctx.addRam(a.account, 208n + authorityBytes(a.auth))
        putPermission(ctx, a.account, a.permission, a.parent, a.auth)
        return
      }
      case 'deleteauth': {
        const a = ctx.decode<{ account: string; permission: string }>(abi, 'deleteauth')
        ctx.requireAuth(a.account)
        check(a.permission !== 'active' && a.permission !== 'owner', 'Cannot delete active or owner authority')
        const existing = state.get('permission', permissionKey(a.account, a.permission))
        check(existing, `permission ${a.permission} does not exist`)
        for (const [, p] of state.rows('permission'))
          check(!(p.owner === a.account && p.parent === a.permission), 'Cannot delete a permission that has children')
        for (const [, l] of state.rows('permission_link'))
          check(
            !(l.account === a.account && l.requiredPermission === a.permission),
            'Cannot delete a linked authority. Unlink the authority first',
          )
        state.delete('permission', permissionKey(a.account, a.permission))
        ctx.addRam(a.account, -(208n + authorityBytes(existing.auth)))
        return
      }
      case 'linkauth': {
        const a = ctx.decode<{ account: string; code: string; type: string; requirement: string }>(abi, 'linkauth')
        ctx.requireAuth(a.account)
        check(state.has('account', a.code), `Failed to retrieve code for account: ${a.code}`)
        if (a.code === 'eosio') {
          check(
            !['updateauth', 'deleteauth', 'linkauth', 'unlinkauth', 'canceldelay'].includes(a.type),
            `Cannot link eosio::${a.type} to a minimum permission`,
          )
        }
        if (a.requirement !== 'eosio.any')
          check(
            state.has('permission', permissionKey(a.account, a.requirement)),
            `Failed to retrieve permission: ${a.requirement}`,
          )
        const key = linkKey(a.account, a.code, a.type)
        if (!state.has('permission_link', key)) ctx.addRam(a.account, 40n + 64n)
        state.put('permission_link', key, {
          account: a.account,
          code: a.code,
          messageType: a.type,
          requiredPermission: a.requirement,
        })
        return
      }
      case 'unlinkauth': {
        const a = ctx.decode<{ account: string; code: string; type: string }>(abi, 'unlinkauth')
        ctx.requireAuth(a.account)
        const key = linkKey(a.account, a.code, a.type)
        check(state.has('permission_link', key), 'Attempting to unlink authority, but no link found')
        state.delete('permission_link', key)
        ctx.addRam(a.account, -(40n + 64n))
        return
      }
      case 'setcode': {
        const a = ctx.decode<{ account: string; vmtype: number; vmversion: number; code: string }>(abi, 'setcode')
        ctx.requireAuth(a.account)
        const code = new Uint8Array(Buffer.from(a.code, 'hex'))
        const meta = state.get('account_metadata', a.account)
        check(meta, `account ${a.account} does not exist`)
        const codeHash = code.length > 0 ? toHex(sha256(code)) : undefined
        if (codeHash && !contracts.has(codeHash)) {
          throw chainErrors.actionValidate(
            `the devchain runs only its native contracts (${contractNames()}); setcode must carry one's marker code`,
          )
        }
        check(meta.codeHash !== codeHash, 'contract is already running this version of code')
        const oldSize = meta.codeHash ? BigInt(state.get('code', meta.codeHash)?.code.length ?? 0) : 0n
        if (codeHash && !state.has('code', codeHash)) state.put('code', codeHash, { codeHash, code })
        state.put('account_metadata', a.account, { ...meta, codeHash, lastCodeUpdateUs: ctx.blockTimeUs })
        const seq = state.get('_account_sequence', a.account) ?? {
          recvSequence: 0n,
          authSequence: 0n,
          codeSequence: 0,
          abiSequence: 0,
        }
        state.put('_account_sequence', a.account, { ...seq, codeSequence: seq.codeSequence + 1 })
        ctx.addRam(a.account, (BigInt(code.length) - oldSize) * SETCODE_RAM_MULTIPLIER)
        return
      }
      case 'setabi': {
        const a = ctx.decode<{ account: string; abi: string }>(abi, 'setabi')
        ctx.requireAuth(a.account)
        const account = state.get('account', a.account)
        check(account, `account ${a.account} does not exist`)
        const bytes = new Uint8Array(Buffer.from(a.abi, 'hex'))
        state.put('account', a.account, { ...account, abi: bytes })
        const seq = state.get('_account_sequence', a.account) ?? {
          recvSequence: 0n,
          authSequence: 0n,
          codeSequence: 0,
          abiSequence: 0,
        }
        state.put('_account_sequence', a.account, { ...seq, abiSequence: seq.abiSequence + 1 })
        ctx.addRam(a.account, BigInt(bytes.length - account.abi.length))
        return
      }
      case 'canceldelay': {
        const a = ctx.decode<{ canceling_auth: { actor: string; permission: string }; trx_id: string }>(
          abi,
          'canceldelay',
        )
        ctx.requireAuth(a.canceling_auth.actor, a.canceling_auth.permission)
        let found: string | undefined
        for (const [key, row] of state.rows('generated_transaction'))
          if (row.sender === '' && row.trxId === a.trx_id) found = key
        check(found, 'cannot cancel trx_id=' + a.trx_id + ', there is no deferred transaction with that transaction id')
        const row = state.get('generated_transaction', found)!
        check(
          row.payer === a.canceling_auth.actor,
          'canceling_auth in canceldelay action was not found as authorization in the original delayed transaction',
        )
        state.delete('generated_transaction', found)
        ctx.addRam(row.payer, -(BigInt(row.packedTrx.length) + 96n))
        return
      }
      case 'onblock':
        return
      default:
        throw chainErrors.actionNotFound(`unknown action eosio::${ctx.act.name}`)
    }
  }

  const system = defineNativeContract({ name: 'eosio', abi: SYSTEM_ABI, apply })
  return system
}
