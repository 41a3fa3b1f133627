import type { ApplyContext } from '../chain/apply-context.ts'
import { check } from '../errors.ts'
import { defineAbi, defineNativeContract } from './native.ts'

/**
 * rawdb: a test contract whose actions write, update and erase arbitrary bytes in any
 * table/scope/key of its own account, notify accounts and send inline actions, so any ABI (and any
 * ABI change over time) and any trace shape can be exercised. Its ABI declares only the actions:
 * tests `setabi` it with whatever tables they want rows decoded by.
 */

export const RAWDB_ABI = defineAbi({
  structs: {
    put: [
      ['scope', 'name'],
      ['table', 'name'],
      ['key', 'uint64'],
      ['payer', 'name'],
      ['value', 'bytes'],
    ],
    erase: [
      ['scope', 'name'],
      ['table', 'name'],
      ['key', 'uint64'],
    ],
    notify: [['recipients', 'name[]']],
    permission_level: [
      ['actor', 'name'],
      ['permission', 'name'],
    ],
    send: [
      ['account', 'name'],
      ['name', 'name'],
      ['authorization', 'permission_level[]'],
      ['data', 'bytes'],
    ],
    fail: [['message', 'string']],
  },
  actions: ['put', 'erase', 'notify', 'send', 'fail'],
})

function apply(ctx: ApplyContext): void {
  if (ctx.receiver !== ctx.act.account) return
  const abi = rawdb.abi
  switch (ctx.act.name) {
    case 'put': {
      const a = ctx.decode<{ scope: string; table: string; key: string; payer: string; value: string }>(abi, 'put')
      ctx.requireAuth(a.payer)
      const key = BigInt(a.key)
      const value = new Uint8Array(Buffer.from(a.value, 'hex'))
      if (ctx.db.find(a.scope, a.table, key)) ctx.db.update(a.scope, a.table, key, a.payer, value)
      else ctx.db.store(a.scope, a.table, a.payer, key, value)
      return
    }
    case 'erase': {
      const a = ctx.decode<{ scope: string; table: string; key: string }>(abi, 'erase')
      const row = ctx.db.find(a.scope, a.table, BigInt(a.key))
      check(row, 'row not found')
      ctx.requireAuth(row.payer)
      ctx.db.remove(a.scope, a.table, BigInt(a.key))
      return
    }
    case 'notify': {
      const a = ctx.decode<{ recipients: string[] }>(abi, 'notify')
      for (const recipient of a.recipients) ctx.requireRecipient(recipient)
      return
    }
    case 'send': {
      const a = ctx.decode<{
        account: string
        name: string
        authorization: { actor: string; permission: string }[]
        data: string
      }>(abi, 'send')
      ctx.sendInline({
        account: a.account,
        name: a.name,
        authorization: a.authorization,
        data: new Uint8Array(Buffer.from(a.data, 'hex')),
      })
      return
    }
    case 'fail': {
      const a = ctx.decode<{ message: string }>(abi, 'fail')
      check(false, a.message)
      return
    }
    default:
      check(false, `unknown action ${ctx.act.name} on ${ctx.receiver}`)
  }
}

export const rawdb = defineNativeContract({ name: 'rawdb', abi: RAWDB_ABI, apply })
