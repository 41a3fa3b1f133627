import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { APIClient } from '@wharfkit/antelope'
import type { InboundMessage } from '@dfuse/client'
import { mulberry32 } from '../_helpers/random.ts'
import { dfuseClient, issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'

;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

const SEED = Number(process.env.ANTLER_SEED ?? Date.now() % 1_000_000)
type Json = Record<string, unknown>
type DbRow = { payer: string; json?: unknown; hex?: string }
type Dbop = { op: string; key: string; old?: DbRow; new?: DbRow }

test(`streams under random forks (seed ${SEED}): a client applying every table delta and every fork-step action blindly ends with /v0/state/table's rows and the canonical chain's transfers`, async (t) => {
  const random = mulberry32(SEED)
  const p = await startPlatform(t, ['--lib-depth', '30'])
  const chain = new APIClient({ url: p.chainApi })
  const client = dfuseClient(t, p)
  const users = ['alice', 'bob', 'carol']

  // The client's copies: the token balances of every user (one scope each), and the transfers it holds.
  const tables = new Map<string, Map<string, DbRow>>()
  const problems: string[] = []
  const transfers = new Map<string, number>()
  for (const user of users) {
    const rows = new Map<string, DbRow>()
    tables.set(user, rows)
    await client.streamTableRows(
      { code: 'eosio.token', scope: user, table: 'accounts' },
      (message: InboundMessage) => {
        if (message.type === 'table_snapshot')
          for (const row of (message.data as { rows: (DbRow & { key: string })[] }).rows)
            rows.set(row.key, { payer: row.payer!, json: row.json })
        if (message.type === 'error') problems.push(`${user}: ${JSON.stringify(message.data)}`)
        if (message.type !== 'table_delta') return
        const { dbop } = message.data as { dbop: Dbop }
        // Applied blindly: an insert must find nothing, an update or removal must find exactly its `old`.
        const current = rows.get(dbop.key)
        if (dbop.op === 'ins' ? current !== undefined : JSON.stringify(current) !== JSON.stringify(dbop.old))
          problems.push(
            `${user}: ${dbop.op} of ${dbop.key} found ${JSON.stringify(current)}, expected ${JSON.stringify(dbop.old)}`,
          )
        if (dbop.op === 'rem') rows.delete(dbop.key)
        else rows.set(dbop.key, dbop.new!)
      },
      { fetch: true, listen: true },
    )
  }
  const actionStream = await client.streamActionTraces(
    { accounts: 'eosio.token', action_names: 'transfer', with_fork_steps: true } as Parameters<
      typeof client.streamActionTraces
    >[0],
    (message: InboundMessage) => {
      if (message.type === 'error') problems.push(`action stream: ${JSON.stringify(message.data)}`)
      if (message.type !== 'action_trace') return
      const data = message.data as Json & { step: string; trx_id: string; idx: number }
      const key = `${data.trx_id}/${data.idx}`
      if (data.step === 'undo') {
        if (!transfers.delete(key)) problems.push(`undo of ${key}, which the client does not hold`)
      } else if (transfers.has(key)) problems.push(`${data.step} of ${key}, which the client already holds`)
      else transfers.set(key, data.block_num as number)
    },
  )

  // Transfers between the users, and forks of random depth between them: the devchain replaces the
  // last blocks with a longer branch, re-including their transactions (or dropping one now and then).
  const pushed: string[] = []
  let forks = 0
  for (let i = 0; i < 40; i++) {
    const from = users[Math.floor(random() * 3)]
    const to = users.filter((u) => u !== from)[Math.floor(random() * 2)]
    pushed.push(
      (
        await pushActions(chain, [
          {
            account: 'eosio.token',
            name: 'transfer',
            actor: from,
            data: { from, to, quantity: '0.0001 EOS', memo: `f${i}` },
          },
        ])
      ).id,
    )
    if (random() < 0.4) {
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 400)))
      const drop = random() < 0.3 ? [pushed.at(-1)!] : []
      const response = await fetch(`${p.chainApi}/v1/devchain/fork`, {
        method: 'POST',
        body: JSON.stringify({ depth: 1 + Math.floor(random() * 6), drop }),
      })
      if (response.status === 200) forks++
    }
  }
  // Quiet: no more changes; wait until the store is past the last fork and the streams have caught up.
  const head = (await chain.v1.chain.get_info()).head_block_num.toNumber()
  await waitIndexed(p.api, head + 5)
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  assert.ok(forks >= 5, `${forks} forks injected`)

  const token = await issueToken(p, p.apiKey)
  for (const user of users) {
    const response = await fetch(`${p.api}/v0/state/table?account=eosio.token&table=accounts&scope=${user}&json=true`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const rest = (await response.json()) as { rows: { key: string; payer: string; json: unknown }[] }
    assert.deepEqual(
      Object.fromEntries(tables.get(user)!),
      Object.fromEntries(rest.rows.map((r) => [r.key, { payer: r.payer, json: r.json }])),
      `${user}'s balance row`,
    )
  }
  const executed: string[] = []
  for (const id of pushed) {
    const response = await fetch(`${p.api}/v0/transactions/${id}`, { headers: { authorization: `Bearer ${token}` } })
    const lifecycle = (await response.json()) as { transaction_status?: string }
    if (lifecycle.transaction_status === 'executed') executed.push(`${id}/0`)
  }
  // Under load the stream may still be delivering the last steps: wait until it agrees or 30 s pass.
  const expected = JSON.stringify([...executed].sort())
  await pollUntil(
    async () => JSON.stringify([...transfers.keys()].sort()),
    (held) => held === expected,
    30_000,
  ).catch(() => undefined)
  await actionStream.close()
  assert.deepEqual(problems, [])
  assert.deepEqual(
    [...transfers.keys()].sort(),
    executed.sort(),
    "the transfers the client holds are the canonical chain's",
  )
})
