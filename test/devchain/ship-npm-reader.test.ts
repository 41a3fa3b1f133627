import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HyperionSequentialReader } from '@eosrio/hyperion-sequential-reader'
import { ABI } from '@greymass/eosio'
import { startDevchain, pushSigned, token, type Devchain } from '../../src/devchain/index.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

interface ReaderBlock {
  blockInfo: {
    this_block: { block_num: number; block_id: string }
    prev_block: { block_num: number; block_id: string }
  }
  actions: {
    receiver: string
    act: { account: string; name: string; data: Record<string, unknown> }
    receipt: { global_sequence: string }
  }[]
  deltas: { present: boolean; code: string; table: string; scope: string; value: unknown }[]
}

/** A transfer in a block of its own. */
function transfer(devchain: Devchain, memo: string) {
  pushSigned(devchain.chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.0010 EOS', memo },
    },
  ])
  return devchain.chain.produceBlock()
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

// Both devchain modes: legacy blocks, and Savanna blocks (finality extension, LIB at head − 2) that a
// Leap-era reader still reads with its v0 requests.
for (const savanna of [false, true])
  test(`hyperion-sequential-reader (written for nodeos) reads ${savanna ? 'Savanna' : 'legacy'} blocks, traces and deltas across a fork and a devchain restart`, async (t) => {
    const dataDir = tempDir(t)
    const config = {
      dataDir,
      host: '127.0.0.1',
      chainPort: 0,
      shipPort: 0,
      blockTimeMs: 0,
      libDepth: 12,
      producers: 3,
      forkRate: 0,
      workload: 'none' as const,
      savanna,
    }
    let devchain = await startDevchain(config)
    const ports = { chainPort: Number(new URL(devchain.chainApi).port), shipPort: Number(new URL(devchain.ship).port) }
    onCleanup(t, () => devchain.close())
    for (let i = 0; i < 3; i++) transfer(devchain, `before ${i}`)

    const reader = new HyperionSequentialReader({
      shipApi: devchain.ship,
      chainApi: devchain.chainApi,
      poolSize: 1,
      startBlock: 2,
      logLevel: 'error',
    })
    reader.addContract('eosio.token', ABI.from(JSON.parse(JSON.stringify(token.abi))))
    const received: ReaderBlock[] = []
    reader.events.on('block', (block: ReaderBlock) => {
      received.push(block)
      reader.ack()
    })
    let stopped = false
    reader.onDisconnect = () => {
      if (!stopped) reader.restart(300)
    }
    reader.start()
    onCleanup(t, () => {
      stopped = true
      reader.stop()
    })

    const lastNum = () => received.at(-1)?.blockInfo.this_block.block_num ?? 0
    await until(() => lastNum() === devchain.chain.head.num, 'the reader to reach head')

    // Blocks, traces and deltas as nodeos would send them: the boot transfers and a later transfer.
    const transfers = received
      .flatMap((b) => b.actions)
      .filter((a) => a.act.name === 'transfer' && a.act.data.memo === 'before 1')
    assert.deepEqual(
      transfers.map((a) => a.receiver),
      ['eosio.token', 'alice', 'bob'],
    )
    assert.equal(transfers[0].act.data.quantity, '0.0010 EOS')
    const balanceRows = received
      .flatMap((b) => b.deltas)
      .filter((d) => d.code === 'eosio.token' && d.table === 'accounts')
    assert.ok(balanceRows.some((d) => d.present && d.scope === 'bob'))

    // A fork of depth 2: the reader sees a lower block number, then the longer branch. The forked
    // blocks are empty: after a fork this reader emits whichever block its workers finish first, so
    // a block with actions to decode can be overtaken (its own race; re-inclusion is tested with ours).
    devchain.chain.produceBlock()
    devchain.chain.produceBlock()
    await until(() => lastNum() === devchain.chain.head.num, 'the reader to reach head')
    const before = lastNum()
    const fork = devchain.chain.fork(2)
    assert.equal(fork.fork_block_num, before - 1)
    await until(
      () =>
        lastNum() === devchain.chain.head.num &&
        received.at(-1)!.blockInfo.this_block.block_id === devchain.chain.head.id,
      'the new branch',
    )
    const nums = received.map((b) => b.blockInfo.this_block.block_num)
    const rewind = nums.findIndex((n, i) => i > 0 && n <= nums[i - 1])
    assert.ok(rewind > 0, 'a lower block number follows the old head')
    assert.equal(nums[rewind], fork.fork_block_num)

    // A devchain restart mid-stream: the reader reconnects and continues with no gap.
    const seenBeforeRestart = received.length
    await devchain.close()
    devchain = await startDevchain({ ...config, ...ports })
    for (let i = 0; i < 3; i++) transfer(devchain, `after ${i}`)
    await until(() => lastNum() === devchain.chain.head.num, 'the reader to catch up after the restart')
    const after = received.slice(seenBeforeRestart).map((b) => b.blockInfo.this_block.block_num)
    const lastBefore = received[seenBeforeRestart - 1].blockInfo.this_block.block_num
    assert.deepEqual(
      after,
      Array.from({ length: after.length }, (_, i) => lastBefore + 1 + i),
      'consecutive blocks after the reconnect',
    )
    // Every block the reader ended with is on the canonical chain.
    for (const block of received.slice(-5))
      assert.equal(block.blockInfo.this_block.block_id, devchain.chain.blockIdAt(block.blockInfo.this_block.block_num))
    if (savanna) assert.equal(devchain.chain.head.num - devchain.chain.lib.blockNum, 2)
  })
