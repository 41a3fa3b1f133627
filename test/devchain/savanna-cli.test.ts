import { test } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { onCleanup } from '../_helpers/cleanup.ts'
import { startPlatform } from '../_helpers/platform.ts'
import { pushActions, waitIndexed } from '../_helpers/push.ts'
import { createShipReader, decodeFinalityData } from '../../src/ship/index.ts'

type Json = Record<string, unknown>

test('antler dev --savanna: a Savanna chain end to end; the API never shows the header finality root as the action root', async (t) => {
  const p = await startPlatform(t, ['--savanna', '--no-auth'])
  const chain = new APIClient({ url: p.chainApi })
  const pushed = await pushActions(chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      actor: 'alice',
      data: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'savanna' },
    },
  ])
  await waitIndexed(p.api, pushed.blockNum)

  const block = (await (
    await fetch(`${p.chainApi}/v1/chain/get_block`, {
      method: 'POST',
      body: JSON.stringify({ block_num_or_id: pushed.blockNum }),
    })
  ).json()) as Json
  assert.equal(block.schedule_version, 0x80000000)
  assert.match(String(block.finality_mroot), /^[0-9a-f]{64}$/)
  const info = (await (await fetch(`${p.chainApi}/v1/chain/get_info`)).json()) as Json
  assert.ok(
    Number(info.head_block_num) - Number(info.last_irreversible_block_num) <= 3,
    'LIB about two blocks behind head',
  )

  const lifecycle = (await (await fetch(`${p.api}/v0/transactions/${pushed.id}`)).json()) as Json & {
    execution_block_header: Json
  }
  assert.equal(lifecycle.transaction_status, 'executed')
  const header = lifecycle.execution_block_header
  assert.equal(header.previous, block.previous)
  assert.equal(header.transaction_mroot, block.transaction_mroot)
  assert.notEqual(header.action_mroot, block.finality_mroot, 'the finality root is not shown as the action root')
  // Without --fetch-finality-data the indexer has no real action root to show.
  assert.equal(header.action_mroot, '')
})

// The last hop, IndexerConfig.fetchFinalityData → createShipReader, is in src/ingest/indexer.ts (owned elsewhere).
test('antler dev --savanna --fetch-finality-data: the API shows the real action root from finality_data', async (t) => {
  const p = await startPlatform(t, ['--savanna', '--no-auth', '--fetch-finality-data'])
  const chain = new APIClient({ url: p.chainApi })
  const pushed = await pushActions(chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      actor: 'alice',
      data: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'finality data' },
    },
  ])
  await waitIndexed(p.api, pushed.blockNum)
  const reader = createShipReader({
    url: p.ship,
    startBlockNum: pushed.blockNum,
    endBlockNum: pushed.blockNum + 1,
    fetchFinalityData: true,
  })
  onCleanup(t, () => reader.close())
  let actionMroot = ''
  for await (const r of reader.blocks()) actionMroot = decodeFinalityData(r.finalityData!).actionMroot
  const lifecycle = (await (await fetch(`${p.api}/v0/transactions/${pushed.id}`)).json()) as Json & {
    execution_block_header: Json
  }
  assert.match(actionMroot, /^[0-9a-f]{64}$/)
  assert.equal(lifecycle.execution_block_header.action_mroot, actionMroot)
})
