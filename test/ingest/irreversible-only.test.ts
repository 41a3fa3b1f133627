import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { pushSigned } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { startShipProxy } from '../_helpers/ship-proxy.ts'
import { dumpSqliteStore, until } from '../_helpers/store.ts'
import { mulberry32 } from '../_helpers/random.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

test('with irreversibleOnly the store never holds a block above LIB and no fork reaches it; it ends equal to a normal index of the same blocks', async (t) => {
  const libDepth = 4
  const devchain = await withDevchain(t, { libDepth })
  const { chain } = devchain
  const transfer = (memo: string) =>
    pushSigned(chain, [
      {
        account: 'eosio.token',
        name: 'transfer',
        authorization: [{ actor: 'alice', permission: 'active' }],
        data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
      },
    ])
  for (let i = 0; i < 20; i++) {
    transfer(`a${i}`)
    chain.produceBlock()
  }
  const dir = tempDir(t)
  const store = openSqliteStore(join(dir, 'live.sqlite'))
  onCleanup(t, () => store.close())
  const proxy = await startShipProxy(t, devchain.ship)
  let forks = 0
  const aboveLib: string[] = []
  const indexer = createIndexer({
    shipUrl: proxy.url,
    store,
    irreversibleOnly: true,
    onFork: () => forks++,
    onBlock: (b) => {
      // What the node said LIB was with this block, and the chain's LIB now (never behind it).
      if (b.num > b.lib || b.num > chain.lib.blockNum)
        aboveLib.push(`${b.num} (lib ${b.lib}, chain lib ${chain.lib.blockNum})`)
    },
  })
  const running = indexer.run()
  onCleanup(t, () => indexer.stop())

  // Forks of every reversible depth while the indexer follows: none may reach the store.
  const random = mulberry32(19)
  let chainForks = 0
  for (let round = 0; round < 30; round++) {
    transfer(`r${round}`)
    chain.produceBlock()
    chain.produceBlock()
    const depth = 1 + Math.floor(random() * libDepth)
    if (depth <= chain.head.num - chain.lib.blockNum) {
      chain.fork(depth)
      chainForks++
    }
    await new Promise((r) => setTimeout(r, 10))
    const head = (await store.position())?.head.blockNum ?? 0
    assert.ok(head <= chain.lib.blockNum, `store head ${head} above the chain's LIB ${chain.lib.blockNum}`)
  }
  const lib = chain.lib.blockNum
  await until(async () => (await store.position())?.head.blockNum === lib, 'the store to reach LIB')
  await new Promise((r) => setTimeout(r, 200))
  assert.equal((await store.position())?.head.blockNum, lib, 'and not one block past it')
  await indexer.stop()
  await running

  assert.ok(chainForks >= 20, `the chain forked ${chainForks} times`)
  assert.equal(forks, 0, 'no fork reached the indexer')
  assert.deepEqual(aboveLib, [])
  assert.ok(
    proxy.requests.length > 0 && proxy.requests.every((r) => r.irreversibleOnly),
    'irreversible_only was requested',
  )
  assert.deepEqual(await store.reversibleBlocks(), [])
  for (let n = 1; n <= lib; n++)
    assert.equal((await store.blockByNum(n))?.id, chain.blockIdAt(n), `block ${n} is the final chain's`)

  // The same blocks indexed normally to LIB: the same store contents.
  const fresh = openSqliteStore(join(dir, 'fresh.sqlite'))
  await createIndexer({ shipUrl: devchain.ship, store: fresh, endBlockNum: lib }).run()
  await fresh.close()
  const live = dumpSqliteStore(join(dir, 'live.sqlite'))
  const freshDump = dumpSqliteStore(join(dir, 'fresh.sqlite'))
  for (const table of Object.keys(freshDump)) assert.deepEqual(live[table], freshDump[table], table)
})
