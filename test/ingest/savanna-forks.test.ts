import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { PrivateKey } from '@wharfkit/antelope'
import { toHex } from '../../src/antelope/index.ts'
import { keyAuthority, pushSigned, type Devchain } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { dumpPostgresStore, dumpSqliteStore, seededRandom, until } from '../_helpers/store.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

// The fork-storm differential (test/ingest/fork-storm.test.ts) on a Savanna devchain: LIB two
// blocks behind head, then a finality stall of 500 blocks during which forks up to 100 deep cut
// blocks the live indexer already holds, then the release and LIB's jump. The live store must
// equal a fresh index of the final chain, row by row.

const SEED = Number(process.env.ANTLER_SEED ?? 20261125)
const STALL_BLOCKS = 500
const MAX_FORK_DEPTH = 100

/** One random step of a workload touching every kind of state the store versions. */
function randomActions(devchain: Devchain, random: () => number, step: number) {
  const users = ['alice', 'bob', 'carol']
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]
  const rawdbAuth = [{ actor: 'rawdb', permission: 'active' }]
  switch (Math.floor(random() * 5)) {
    case 0: {
      const from = pick(users)
      const to = pick(users.filter((u) => u !== from))
      return [
        {
          account: 'eosio.token',
          name: 'transfer',
          authorization: [{ actor: from, permission: 'active' }],
          data: { from, to, quantity: '0.0001 EOS', memo: `s${step}` },
        },
      ]
    }
    case 1:
      return [
        {
          account: 'rawdb',
          name: 'put',
          authorization: rawdbAuth,
          data: {
            scope: pick(['a', 'b', 'c']),
            table: 'rows',
            key: String(Math.floor(random() * 8)),
            payer: 'rawdb',
            value: toHex(new Uint8Array([step & 0xff, 1])),
          },
        },
      ]
    case 2: {
      const scope = pick(['a', 'b', 'c'])
      const key = Math.floor(random() * 8)
      const exists = devchain.chain.state.has(
        'contract_row',
        `rawdb\u0000${scope}\u0000rows\u0000${key.toString(16).padStart(16, '0')}`,
      )
      return exists
        ? [
            {
              account: 'rawdb',
              name: 'erase',
              authorization: rawdbAuth,
              data: { scope, table: 'rows', key: String(key) },
            },
          ]
        : []
    }
    case 3: {
      const key = PrivateKey.generate('K1').toPublic().toString()
      const who = pick(users)
      return [
        {
          account: 'eosio',
          name: 'updateauth',
          authorization: [{ actor: who, permission: 'active' }],
          data: {
            account: who,
            permission: `p${step % 5}`,
            parent: 'active',
            auth: { ...keyAuthority(key), keys: [{ key, weight: 1 }] },
          },
        },
      ]
    }
    default: {
      const who = pick(users)
      return [
        {
          account: 'eosio',
          name: 'linkauth',
          authorization: [{ actor: who, permission: 'active' }],
          data: { account: who, code: 'rawdb', type: pick(['put', 'erase']), requirement: 'active' },
        },
      ]
    }
  }
}

interface Backing {
  open(): Promise<Store>
  dump(): Promise<Record<string, unknown[]>> | Record<string, unknown[]>
}

const ADAPTERS: { name: string; skip: string | false; make: (t: TestContext, label: string) => Promise<Backing> }[] = [
  {
    name: 'sqlite',
    skip: false,
    make: async (t, label) => {
      const path = join(tempDir(t), `${label}.sqlite`)
      return { open: async () => openSqliteStore(path), dump: () => dumpSqliteStore(path) }
    },
  },
  {
    name: 'postgres',
    skip: PG_SKIP_REASON,
    make: async (t) => {
      const url = await withPostgresDatabase(t)
      return { open: () => openPostgresStore(url), dump: () => dumpPostgresStore(url) }
    },
  },
]

for (const adapter of ADAPTERS) {
  test(
    `Savanna fork storm on ${adapter.name} (seed ${SEED}): LIB at head − 2, a ${STALL_BLOCKS}-block finality stall with forks up to ${MAX_FORK_DEPTH} deep, then the LIB jump; the live store equals a fresh index`,
    { skip: adapter.skip },
    async (t) => {
      const random = seededRandom(SEED)
      const devchain = await withDevchain(t, { savanna: true })
      const { chain } = devchain
      const liveBacking = await adapter.make(t, 'live')
      const liveStore = await liveBacking.open()
      onCleanup(t, () => liveStore.close())
      const forkDepthsSeen: number[] = []
      const libsSeen: number[] = []
      const live = createIndexer({
        shipUrl: devchain.ship,
        store: liveStore,
        onFork: (f) => forkDepthsSeen.push(f.undone),
        onBlock: (b) => libsSeen.push(b.lib),
      })
      const running = live.run()
      onCleanup(t, () => live.stop())

      const push = (step: number) => {
        const actions = randomActions(devchain, random, step)
        if (!actions.length) return
        try {
          pushSigned(chain, actions)
        } catch {
          // e.g. a linkauth that already exists with the same requirement: refused by the chain, fine.
        }
      }
      const catchUp = async () => {
        const at = chain.head.id
        await until(
          async () => (await liveStore.position())?.head.blockId === at || chain.head.id !== at,
          'the live indexer to catch up',
          60_000,
        )
      }

      // Steady Savanna: LIB two blocks behind head, forks of the two reversible blocks at most.
      let step = 0
      for (; step < 40; step++) {
        push(step)
        chain.produceBlock()
        assert.equal(chain.head.num - chain.lib.blockNum, 2)
        if (random() < 0.2) chain.fork(1 + Math.floor(random() * 2))
        if (step % 10 === 0) await catchUp()
      }
      await catchUp()

      // The stall: head advances 500 blocks, LIB does not move; forks cut up to 100 blocks the
      // indexer already holds (the deepest exactly 100), the live indexer catching up in between.
      chain.setFinalityStalled(true)
      const frozenLib = chain.lib
      const stallStart = chain.head.num
      const forkAt = new Map([
        [150, MAX_FORK_DEPTH],
        [260, 37],
        [330, 64],
        [420, 5],
        [480, 1 + Math.floor(random() * MAX_FORK_DEPTH)],
      ])
      const forksInjected: number[] = []
      for (let i = 1; chain.head.num - stallStart < STALL_BLOCKS; i++, step++) {
        push(step)
        chain.produceBlock()
        const depth = forkAt.get(i) ?? (random() < 0.03 ? 1 + Math.floor(random() * 10) : 0)
        if (depth) {
          await catchUp()
          chain.fork(depth)
          forksInjected.push(depth)
        }
        if (i % 25 === 0) await catchUp()
      }
      assert.deepEqual(chain.lib, frozenLib, 'LIB does not move while finality is stalled')
      assert.ok(chain.head.num - frozenLib.blockNum >= STALL_BLOCKS)
      await catchUp()

      // The release: the next block claims its parent and LIB jumps to head − 2.
      chain.setFinalityStalled(false)
      for (let i = 0; i < 4; i++) chain.produceBlock()
      assert.equal(chain.lib.blockNum, chain.head.num - 2)
      const head = chain.head
      await until(
        async () => (await liveStore.position())?.head.blockId === head.id,
        'the live indexer to reach head',
        60_000,
      )
      await live.stop()
      await running

      const freshBacking = await adapter.make(t, 'fresh')
      const freshStore = await freshBacking.open()
      await createIndexer({ shipUrl: devchain.ship, store: freshStore, endBlockNum: head.num }).run()
      await freshStore.close()

      assert.ok(
        forksInjected.includes(MAX_FORK_DEPTH) && forksInjected.length >= 5,
        `forks injected during the stall: ${forksInjected.join(', ')}`,
      )
      assert.ok(
        Math.max(...forkDepthsSeen) >= MAX_FORK_DEPTH,
        `the live indexer undid a ${MAX_FORK_DEPTH}-block fork (undone: ${forkDepthsSeen.join(', ')})`,
      )
      const jumps = libsSeen.slice(1).map((lib, i) => lib - libsSeen[i])
      assert.ok(
        Math.max(...jumps) >= STALL_BLOCKS,
        `the live indexer saw LIB jump by at least ${STALL_BLOCKS} in one result (largest ${Math.max(...jumps)})`,
      )
      assert.equal((await liveStore.position())?.lib, head.num - 2)
      assert.deepEqual(await liveStore.integrityFindings(), [])
      const liveDump = await liveBacking.dump()
      const freshDump = await freshBacking.dump()
      for (const table of Object.keys(freshDump))
        assert.deepEqual(liveDump[table], freshDump[table], `table ${table} (seed ${SEED})`)
      assert.ok(
        freshDump.row_versions.length > 10 &&
          freshDump.permission_versions.length > 5 &&
          freshDump.link_versions.length > 0,
      )
    },
  )
}
