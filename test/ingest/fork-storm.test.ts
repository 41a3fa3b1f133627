import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { bigIntToName, encodeAbiBinary, toHex } from '../../src/antelope/index.ts'
import { keyAuthority, pushSigned, rawdb, RAWDB_ABI, type Devchain } from '../../src/devchain/index.ts'
import { ABI, PrivateKey, Serializer } from '@wharfkit/antelope'
import { createIndexer } from '../../src/ingest/index.ts'
import { openPostgresStore, openSqliteStore, type ActionRecord, type Store } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { dumpPostgresStore, dumpSqliteStore, seededRandom, until } from '../_helpers/store.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import type { TestContext } from 'node:test'
import { onCleanup } from '../_helpers/cleanup.ts'

const SEED = Number(process.env.ANTLER_SEED ?? 20261122)

/** One random step of a workload that touches every kind of state the store versions. */
function randomActions(devchain: Devchain, random: () => number, step: number) {
  const users = ['alice', 'bob', 'carol']
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]
  const kind = Math.floor(random() * 6)
  const rawdbAuth = [{ actor: 'rawdb', permission: 'active' }]
  switch (kind) {
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
    case 1: {
      const put = {
        scope: pick(['a', 'b', 'c']),
        table: 'rows',
        key: String(Math.floor(random() * 8)),
        payer: 'rawdb',
        value: toHex(new Uint8Array([step & 0xff, 1])),
      }
      if (step % 3 !== 0) return [{ account: 'rawdb', name: 'put', authorization: rawdbAuth, data: put }]
      // Every third put is an inline action sent by rawdb::send (parent.* terms).
      const data = Serializer.encode({ abi: rawdb.abi, type: 'put', object: put }).hexString
      return [
        {
          account: 'rawdb',
          name: 'send',
          authorization: rawdbAuth,
          data: { account: 'rawdb', name: 'put', authorization: rawdbAuth, data },
        },
      ]
    }
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
    case 4: {
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
    default: {
      const abi = ABI.from({
        ...RAWDB_ABI,
        structs: [...RAWDB_ABI.structs, { name: `row${step}`, base: '', fields: [{ name: 'v', type: 'uint8' }] }],
        tables: [{ name: 'rows', index_type: 'i64', key_names: [], key_types: [], type: `row${step}` }],
      })
      return [
        {
          account: 'eosio',
          name: 'setabi',
          authorization: rawdbAuth,
          data: { account: 'rawdb', abi: toHex(encodeAbiBinary(abi)) },
        },
      ]
    }
  }
}

/**
 * The terms that depend on an action's block, recomputed by brute force from what the store holds
 * (every action, each block's row changes): `db.table` and `db.key` for each row change of the
 * action's block in the contract that ran it, `parent.*` from the action of its transaction whose
 * ordinal is its creator's, `trx_id`. Each such term's search must list exactly those actions:
 * what forks undid is gone, what the final branch wrote is there.
 */
async function assertBlockTermsMatchBruteForce(store: Store): Promise<number> {
  const seqs = (
    await store.searchActions({ query: { not: { term: 'no:such-term' } }, direction: 'forward', limit: 1_000_000 })
  ).map((m) => m.seq)
  const actions = await store.actionsBySeq(seqs)
  assert.equal(actions.length, seqs.length)
  const byOrdinal = new Map(actions.map((a) => [`${a.trxId}/${a.actionOrdinal}`, a]))
  const rowsOfBlock = new Map<number, Awaited<ReturnType<Store['rowChanges']>>>()
  for (const num of new Set(actions.map((a) => a.blockNum))) rowsOfBlock.set(num, await store.rowChanges(num))
  const expected = new Map<string, number[]>()
  const add = (term: string, a: ActionRecord) => {
    const list = expected.get(term) ?? []
    if (list.at(-1) !== Number(a.globalSequence)) list.push(Number(a.globalSequence))
    expected.set(term, list)
  }
  for (const a of actions) {
    add(`trx_id:${a.trxId}`, a)
    const parent = a.creatorActionOrdinal ? byOrdinal.get(`${a.trxId}/${a.creatorActionOrdinal}`) : undefined
    if (parent) {
      add(`parent.receiver:${parent.receiver}`, a)
      add(`parent.account:${parent.account}`, a)
      add(`parent.action:${parent.name}`, a)
    }
    for (const row of rowsOfBlock.get(a.blockNum) ?? []) {
      if (row.code !== a.receiver) continue
      add(`db.table:${row.table}`, a)
      add(`db.table:${row.table}/${row.scope}`, a)
      add(`db.key:${row.table}/${row.scope}/${bigIntToName(row.primaryKey)}`, a)
    }
  }
  assert.ok(
    expected.has('parent.action:send') && expected.has('db.table:rows/a'),
    'the workload has inline actions and rows',
  )
  for (const [term, want] of expected) {
    for (const direction of ['forward', 'backward'] as const) {
      const found = (await store.searchActions({ query: { term }, direction, limit: 1_000_000 })).map((m) => m.seq)
      assert.deepEqual(found, direction === 'forward' ? want : [...want].reverse(), `${term} ${direction}`)
    }
  }
  for (const absent of ['db.table:rows/zz', 'parent.action:nosuch', `trx_id:${'0'.repeat(64)}`])
    assert.deepEqual(await store.searchActions({ query: { term: absent }, direction: 'forward', limit: 10 }), [])
  return expected.size
}

/** A store to index into, and how to dump it for comparison. */
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
    `fork storm on ${adapter.name} (seed ${SEED}): the live store equals a fresh index of the final chain, row by row`,
    { skip: adapter.skip },
    async (t) => {
      const random = seededRandom(SEED)
      const devchain = await withDevchain(t, { libDepth: 6 })
      const liveBacking = await adapter.make(t, 'live')
      const liveStore = await liveBacking.open()
      onCleanup(t, () => liveStore.close())
      let forksSeen = 0
      const live = createIndexer({ shipUrl: devchain.ship, store: liveStore, onFork: () => forksSeen++ })
      const running = live.run()
      onCleanup(t, () => live.stop())

      let forksInjected = 0
      for (let step = 0; step < 80; step++) {
        const actions = randomActions(devchain, random, step)
        if (actions.length) {
          try {
            pushSigned(devchain.chain, actions)
          } catch {
            // e.g. a linkauth that already exists with the same requirement: refused by the chain, fine.
          }
        }
        devchain.chain.produceBlock()
        const reversible = devchain.chain.head.num - devchain.chain.lib.blockNum
        if (reversible > 0 && random() < 0.2) {
          devchain.chain.fork(1 + Math.floor(random() * Math.min(reversible, 6)))
          forksInjected++
        }
        // Every tenth step the live indexer catches up, so later forks cut blocks it already holds
        // (on a loaded machine it could otherwise trail every fork and never undo anything).
        if (step % 10 === 0) {
          const at = devchain.chain.head.id
          await until(
            async () => (await liveStore.position())?.head.blockId === at || devchain.chain.head.id !== at,
            'the live indexer to catch up',
          )
        }
      }
      for (let i = 0; i < 8; i++) devchain.chain.produceBlock()
      const head = devchain.chain.head
      await until(async () => (await liveStore.position())?.head.blockId === head.id, 'the live indexer to reach head')
      await live.stop()
      await running

      const freshBacking = await adapter.make(t, 'fresh')
      const freshStore = await freshBacking.open()
      await createIndexer({ shipUrl: devchain.ship, store: freshStore, endBlockNum: head.num }).run()
      await freshStore.close()

      assert.ok(forksInjected >= 5, `forks injected: ${forksInjected}`)
      assert.ok(forksSeen > 0, 'the live indexer undid forked blocks')
      assert.deepEqual(await liveStore.integrityFindings(), [])
      assert.ok((await assertBlockTermsMatchBruteForce(liveStore)) > 20)
      const liveDump = await liveBacking.dump()
      const freshDump = await freshBacking.dump()
      for (const table of Object.keys(freshDump))
        assert.deepEqual(liveDump[table], freshDump[table], `table ${table} (seed ${SEED})`)
      assert.ok(
        freshDump.row_versions.length > 10 &&
          freshDump.permission_versions.length > 5 &&
          freshDump.link_versions.length > 0 &&
          freshDump.abi_versions.length > 3,
      )
    },
  )
}
