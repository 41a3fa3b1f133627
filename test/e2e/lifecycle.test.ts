import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { APIClient } from '@wharfkit/antelope'
import { DfuseApiError, type DfuseClient, type TransactionLifecycle } from '@dfuse/client'
import { dfuseClient, isStandardError, issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'

;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

type Json = Record<string, unknown>
type Trace = {
  receiver: string
  act: { name: string; data?: Json }
  inline_traces: Trace[]
  receipt: { global_sequence: string } | null
  console: string
  elapsed: number
  block_num: number
}

const transfer = (memo: string, quantity = '1.0000 EOS') => ({
  account: 'eosio.token',
  name: 'transfer',
  actor: 'alice',
  data: { from: 'alice', to: 'bob', quantity, memo },
})

test('GET /v0/transactions/:id with @dfuse/client against a running antler dev: executed, delayed then executed, canceled and forked-out lifecycles; typed and standard errors', async (t) => {
  // LIB 40 blocks (4 s) behind head: forks and the delayed states happen above it.
  const p = await startPlatform(t, ['--lib-depth', '40'])
  const chain = new APIClient({ url: p.chainApi })
  const client: DfuseClient = dfuseClient(t, p)
  const lifecycle = async (id: string) => (await client.fetchTransaction(id)) as TransactionLifecycle & Json

  await t.test(
    'an executed transfer: the signed transaction, the nested trace, the creation tree, the block header, attributable dbops, irreversibility',
    async () => {
      const pushed = await pushActions(chain, [transfer('lifecycle')])
      await waitIndexed(p.api, pushed.blockNum)
      const l = await lifecycle(pushed.id)
      assert.equal(l.transaction_status, 'executed')
      assert.equal(l.id, pushed.id)
      const trx = l.transaction as unknown as Json & {
        actions: { account: string; name: string; data: Json; hex_data: string }[]
        signatures: string[]
      }
      assert.deepEqual(trx.signatures, pushed.signatures, 'the signatures as pushed')
      assert.deepEqual(
        [trx.actions.length, trx.actions[0].name, trx.actions[0].data.memo, trx.actions[0].data.quantity],
        [1, 'transfer', 'lifecycle', '1.0000 EOS'],
      )
      assert.match(trx.actions[0].hex_data, /^[0-9a-f]+$/)
      assert.match(String(trx.expiration), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/)
      const exec = l.execution_trace as unknown as Json & { action_traces: Trace[]; receipt: Json; block_num: number }
      assert.equal(exec.block_num, pushed.blockNum)
      assert.deepEqual(exec.receipt.status, 'executed')
      assert.equal(exec.action_traces.length, 1)
      const root = exec.action_traces[0]
      assert.deepEqual([root.receiver, root.act.name, root.act.data?.to], ['eosio.token', 'transfer', 'bob'])
      assert.deepEqual(
        root.inline_traces.map((x) => x.receiver),
        ['alice', 'bob'],
        'the notifications nest under the transfer',
      )
      assert.deepEqual(l.creation_tree, [
        [0, -1, 0],
        [1, 0, 1],
        [2, 0, 2],
      ])
      const header = l.execution_block_header as unknown as Json
      assert.match(String(header.action_mroot), /^[0-9a-f]{64}$/)
      assert.match(String(header.previous), /^[0-9a-f]{64}$/)
      // Only this transaction ran eosio.token in its block: both balance rows are its dbops.
      const dbops = l.dbops as unknown as {
        op: string
        account: string
        table: string
        scope: string
        key: string
        action_idx: number
        old: Json
        new: Json
      }[]
      assert.deepEqual(dbops.map((d) => [d.op, d.account, d.table, d.scope, d.key]).sort(), [
        ['UPD', 'eosio.token', 'accounts', 'alice', '........ehbo5'],
        ['UPD', 'eosio.token', 'accounts', 'bob', '........ehbo5'],
      ])
      assert.ok(
        dbops.every((d) => typeof d.old.hex === 'string' && typeof d.new.hex === 'string' && d.old.hex !== d.new.hex),
      )
      assert.equal(l.execution_irreversible, false)
      assert.equal(l.created_by, null)
      const later = await pollUntil(
        () => lifecycle(pushed.id),
        (x) => x.execution_irreversible === true,
        30_000,
      )
      assert.equal(later.transaction_status, 'executed')
    },
  )

  await t.test(
    'a delayed transfer: delayed with its creation, then executed as scheduled, created_by a PUSH_CREATE of itself',
    async () => {
      const pushed = await pushActions(chain, [transfer('delayed')], { delaySec: 1 })
      await waitIndexed(p.api, pushed.blockNum)
      const delayed = await lifecycle(pushed.id)
      // The chain may already have run it (block time 100 ms): delayed, or executed if indexing was slower than the
      // delay.
      const ran = await pollUntil(
        () => lifecycle(pushed.id),
        (x) => x.transaction_status === 'executed',
        30_000,
      )
      if (delayed.transaction_status !== 'executed') {
        assert.equal(delayed.transaction_status, 'delayed')
        assert.equal(delayed.execution_trace, null)
      }
      const created = ran.created_by as unknown as Json
      assert.deepEqual(
        [created.op, created.src_trx_id, created.trx_id, created.sender, created.payer, created.block_num],
        ['PUSH_CREATE', pushed.id, pushed.id, '', 'alice', pushed.blockNum],
      )
      assert.deepEqual(
        (ran.dtrxops as unknown as Json[]).map((d) => d.op),
        ['PUSH_CREATE'],
      )
      const exec = ran.execution_trace as unknown as Json & { scheduled: boolean; block_num: number }
      assert.equal(exec.scheduled, true)
      assert.ok(exec.block_num > pushed.blockNum)
      const trx = ran.transaction as unknown as { delay_sec: number; actions: { data: Json }[]; signatures: string[] }
      assert.deepEqual([trx.delay_sec, trx.actions[0].data.memo], [1, 'delayed'])
      assert.deepEqual(trx.signatures, pushed.signatures)
    },
  )

  await t.test('a canceled delayed transfer: canceled, canceled_by names the canceldelay transaction', async () => {
    const pushed = await pushActions(chain, [transfer('to cancel')], { delaySec: 60 })
    await waitIndexed(p.api, pushed.blockNum)
    assert.equal((await lifecycle(pushed.id)).transaction_status, 'delayed')
    const cancel = await pushActions(chain, [
      {
        account: 'eosio',
        name: 'canceldelay',
        actor: 'alice',
        data: { canceling_auth: { actor: 'alice', permission: 'active' }, trx_id: pushed.id },
      },
    ])
    await waitIndexed(p.api, cancel.blockNum)
    const l = await lifecycle(pushed.id)
    assert.equal(l.transaction_status, 'canceled')
    const by = l.canceled_by as unknown as Json
    assert.deepEqual([by.op, by.src_trx_id, by.block_num, by.trx_id], ['CANCEL', cancel.id, cancel.blockNum, pushed.id])
    assert.equal(l.execution_trace, null)
    assert.deepEqual(
      [(l.created_by as unknown as Json).op, (l.created_by as unknown as Json).payer],
      ['PUSH_CREATE', 'alice'],
    )
    assert.equal((l.transaction as unknown as { actions: { data: Json }[] }).actions[0].data.memo, 'to cancel')
    // Created and canceled in one block: the chain keeps no generated_transaction row, the delayed trace still says it
    // was a delayed push.
    const quick = await pushActions(chain, [transfer('canceled at once')], { delaySec: 60 })
    const quickCancel = await pushActions(chain, [
      {
        account: 'eosio',
        name: 'canceldelay',
        actor: 'alice',
        data: { canceling_auth: { actor: 'alice', permission: 'active' }, trx_id: quick.id },
      },
    ])
    await waitIndexed(p.api, quickCancel.blockNum)
    const q = await lifecycle(quick.id)
    assert.equal(q.transaction_status, 'canceled')
    assert.deepEqual(
      [(q.created_by as unknown as Json).op, (q.canceled_by as unknown as Json).src_trx_id],
      ['PUSH_CREATE', quickCancel.id],
    )
  })

  await t.test('a transaction whose only block was forked out and dropped: forked_out', async () => {
    const pushed = await pushActions(chain, [transfer('forked out', '0.0001 EOS')])
    await waitIndexed(p.api, pushed.blockNum)
    assert.equal((await lifecycle(pushed.id)).transaction_status, 'executed')
    const head = (await chain.v1.chain.get_info()).head_block_num.toNumber()
    const fork = await fetch(`${p.chainApi}/v1/devchain/fork`, {
      method: 'POST',
      body: JSON.stringify({ depth: head - pushed.blockNum + 1, drop: [pushed.id] }),
    })
    assert.equal(fork.status, 200, await fork.text())
    const l = await pollUntil(
      () => lifecycle(pushed.id),
      (x) => x.transaction_status !== 'executed',
      20_000,
    )
    assert.equal(l.transaction_status, 'forked_out')
    assert.equal(l.execution_trace, null)
  })

  await t.test(
    'errors: unknown id is data_trx_not_found_error (typed in the client), a malformed id request_validation_error, no token 401',
    async () => {
      const unknown = 'ab'.repeat(32)
      await assert.rejects(client.fetchTransaction(unknown), (e: unknown) => {
        assert.ok(e instanceof DfuseApiError)
        assert.equal(e.code, 'data_trx_not_found_error')
        assert.deepEqual(e.details, { trx_id: unknown })
        return true
      })
      const token = await issueToken(p, p.apiKey)
      for (const [id, status, code] of [
        ['xyz', 400, 'request_validation_error'],
        ['ab'.repeat(33), 400, 'request_validation_error'],
        ['AB'.repeat(32), 400, 'data_trx_not_found_error'],
      ] as const) {
        const response = await fetch(`${p.api}/v0/transactions/${id}`, {
          headers: { authorization: `Bearer ${token}` },
        })
        const body = await response.json()
        assert.equal(response.status, status, id)
        assert.ok(isStandardError(body) && body.code === code, JSON.stringify(body))
      }
      const anonymous = await fetch(`${p.api}/v0/transactions/${unknown}`)
      assert.equal(anonymous.status, 401)
      assert.ok(isStandardError(await anonymous.json()))
    },
  )
})
