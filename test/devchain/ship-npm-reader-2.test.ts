import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { createEosioShipReader, type EosioReaderBlock } from '@blockmatic/eosio-ship-reader'
import { startDevchain, pushSigned, token, type Devchain, type DevchainConfig } from '../../src/devchain/index.ts'
import { decodeShipType } from '../../src/ship/index.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

// A second SHiP reader from npm, independent of hyperion-sequential-reader (ship-npm-reader.test.ts):
// @blockmatic/eosio-ship-reader, written for nodeos 2.x, decodes with eosjs in worker threads from
// the ABI text the server sends first, and sends v0 requests only.

// It starts a pool of worker threads it never ends (its stop() leaves them and its socket open):
// the test keeps each pool it creates and ends it, or the test file would never exit.
interface Pool {
  destroy(): Promise<void>
}
const pools: Pool[] = []
const poolModule = createRequire(import.meta.resolve('@blockmatic/eosio-ship-reader'))('node-worker-threads-pool') as {
  StaticPool: new (...args: unknown[]) => Pool
}
const StaticPool = poolModule.StaticPool
poolModule.StaticPool = class extends StaticPool {
  constructor(...args: unknown[]) {
    super(...args)
    pools.push(this)
  }
}

/** A transfer in a block of its own; the block's number. */
function transfer(devchain: Devchain, memo: string): number {
  pushSigned(devchain.chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.0010 EOS', memo },
    },
  ])
  return devchain.chain.produceBlock().num
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

type Mode = 'legacy' | 'Savanna' | 'legacy reopened as Savanna'

// Legacy blocks; Savanna blocks (a fresh --savanna chain switches at block 2: finality extension,
// Savanna schedule version, LIB at head − 2); and a legacy chain with transfers reopened with
// --savanna, so that the switch falls between transfers. The reader reads from block 1 in one session.
for (const mode of ['legacy', 'Savanna', 'legacy reopened as Savanna'] as Mode[])
  test(
    `@blockmatic/eosio-ship-reader (eosjs, written for nodeos) reads ${mode} blocks, transfers and balance rows in order from block 1`,
    { timeout: 120_000 },
    async (t) => {
      const config: DevchainConfig = {
        dataDir: tempDir(t),
        host: '127.0.0.1',
        chainPort: 0,
        shipPort: 0,
        blockTimeMs: 0,
        libDepth: 12,
        producers: 3,
        forkRate: 0,
        workload: 'none',
        savanna: mode === 'Savanna',
      }
      let devchain = await startDevchain(config)
      const memos = new Map<string, number>()
      for (let i = 0; i < 3; i++) memos.set(`first ${i}`, transfer(devchain, `first ${i}`))
      if (mode === 'legacy reopened as Savanna') {
        await devchain.close()
        devchain = await startDevchain({ ...config, savanna: true })
      }
      const closeDevchain = devchain
      onCleanup(t, () => closeDevchain.close())
      for (let i = 0; i < 3; i++) memos.set(`then ${i}`, transfer(devchain, `then ${i}`))
      const savannaFrom = devchain.chain.savanna?.from
      if (mode === 'legacy') assert.equal(savannaFrom, undefined)
      if (mode === 'Savanna') assert.equal(savannaFrom, 2)
      if (mode === 'legacy reopened as Savanna') assert.equal(savannaFrom, memos.get('first 2')! + 1)

      const tokenAbi = JSON.parse(JSON.stringify(token.abi))
      const reader = await createEosioShipReader({
        ws_url: devchain.ship,
        rpc_url: devchain.chainApi.replace(/\/$/, ''),
        ds_threads: 1,
        request: {
          start_block_num: 1,
          end_block_num: 0xffffffff,
          max_messages_in_flight: 10,
          have_positions: [],
          irreversible_only: false,
          fetch_block: true,
          fetch_traces: true,
          fetch_deltas: true,
        },
        delta_whitelist: () => ['contract_row'],
        table_rows_whitelist: () => [{ code: 'eosio.token', table: 'accounts' }],
        actions_whitelist: () => [{ code: 'eosio.token', action: 'transfer' }],
        contract_abis: () => new Map([['eosio.token', tokenAbi]]),
      })
      const received: EosioReaderBlock[] = []
      const errors: unknown[] = []
      reader.blocks$.subscribe((block) => received.push(block))
      reader.errors$.subscribe((error) => errors.push(error))
      reader.start()
      assert.equal(pools.length, 0)
      onCleanup(t, async () => {
        reader.stop()
        await Promise.all(pools.splice(0).map((pool) => pool.destroy()))
      })

      const head = devchain.chain.head.num
      await until(() => errors.length > 0 || received.at(-1)?.block_num === head, 'the reader to reach head')
      assert.deepEqual(errors, [])
      assert.equal(pools.length, 1, "the reader's worker pool, to be ended")

      // Every block, in order, with the devchain's ids (eosjs writes checksums in upper case) and LIB
      // (head − 2 under Savanna).
      assert.deepEqual(
        received.map((b) => b.block_num),
        Array.from({ length: head }, (_, i) => i + 1),
      )
      for (const block of received)
        assert.equal(block.block_id.toLowerCase(), devchain.chain.blockIdAt(block.block_num))
      // Each signed_block decoded whole by eosjs (its worker throws on bytes left over: Savanna's finality
      // extension included): producer and timestamp as the devchain's ABI decoder reads them.
      for (const block of received) {
        const signed = decodeShipType<{ producer: string; timestamp: string; header_extensions: { type: number }[] }>(
          'signed_block',
          devchain.chain.block(block.block_num)!.block,
        )
        assert.deepEqual(
          [block.producer, Date.parse(`${block.timestamp}Z`)],
          [signed.producer, Date.parse(`${signed.timestamp}Z`)],
          `block ${block.block_num}`,
        )
        const isSavanna = savannaFrom !== undefined && block.block_num >= savannaFrom
        assert.equal(
          signed.header_extensions.some((e) => e.type === 2),
          isSavanna,
          `finality extension in block ${block.block_num}`,
        )
      }
      assert.equal(received.at(-1)!.last_irreversible_block_num, devchain.chain.lib.blockNum)
      if (savannaFrom !== undefined) assert.equal(head - devchain.chain.lib.blockNum, 2)

      // Each transfer, decoded with the token ABI, in the block that carried it, once per receiver.
      for (const [memo, num] of memos) {
        const block = received[num - 1]
        const actions = block.actions.filter(
          (a) => a.name === 'transfer' && (a.data as Record<string, unknown>).memo === memo,
        )
        assert.deepEqual(
          actions.map((a) => (a as unknown as { receiver: string }).receiver),
          ['eosio.token', 'alice', 'bob'],
          `${memo} in block ${num}`,
        )
        assert.deepEqual(actions[0].data, { from: 'alice', to: 'bob', quantity: '0.0010 EOS', memo })
        assert.deepEqual(actions[0].authorization, [{ actor: 'alice', permission: 'active' }])
        // bob's balance row, decoded with the token ABI, changed in the same block.
        const bobRows = block.table_rows.filter(
          (r) => r.code === 'eosio.token' && r.table === 'accounts' && r.scope === 'bob',
        )
        assert.equal(bobRows.length, 1, `bob's balance row in block ${num}`)
        assert.equal(bobRows[0].present, true)
        assert.match((bobRows[0].value as { balance: string }).balance, /^\d+\.\d{4} EOS$/)
      }
      // The last balance the reader decoded is bob's balance on the chain.
      const lastRow = received
        .flatMap((b) => b.table_rows)
        .filter((r) => r.scope === 'bob')
        .at(-1)!
      const balance = (await (
        await fetch(new URL('/v1/chain/get_currency_balance', devchain.chainApi), {
          method: 'POST',
          body: JSON.stringify({ code: 'eosio.token', account: 'bob', symbol: 'EOS' }),
        })
      ).json()) as string[]
      assert.deepEqual([(lastRow.value as { balance: string }).balance], balance)

      // Blocks on both sides of the switch, transfers included where the switch falls between them.
      if (savannaFrom !== undefined)
        assert.ok(
          received.some((b) => b.block_num === savannaFrom - 1) && received.some((b) => b.block_num === savannaFrom),
        )
    },
  )
