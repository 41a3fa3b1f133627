import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { Serializer } from '@wharfkit/antelope'
import { toHex } from '../../src/antelope/index.ts'
import { pushSigned, rawdb, type Devchain } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openPostgresStore, openSqliteStore, type Step, type StepPayload, type Store } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { dumpPostgresStore, dumpSqliteStore, seededRandom, until } from '../_helpers/store.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

const SEED = Number(process.env.ANTLER_SEED ?? 20261125)
/** Steps read (and their payloads) per call, as a live hub reads them; small, so a run crosses many batches. */
const BATCH = 64

/** One random step of a workload writing, rewriting and erasing rows and running actions (inline ones too). */
function randomActions(devchain: Devchain, random: () => number, step: number) {
  const users = ['alice', 'bob', 'carol']
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]
  const auth = [{ actor: 'rawdb', permission: 'active' }]
  const scope = pick(['a', 'b'])
  const key = Math.floor(random() * 5)
  switch (Math.floor(random() * 4)) {
    case 0: {
      const from = pick(users)
      const to = pick(users.filter((u) => u !== from))
      return [
        {
          account: 'eosio.token',
          name: 'transfer',
          authorization: [{ actor: from, permission: 'active' }],
          data: { from, to, quantity: '0.0001 EOS', memo: `f${step}` },
        },
      ]
    }
    case 1:
      return [
        {
          account: 'rawdb',
          name: 'put',
          authorization: auth,
          data: {
            scope,
            table: 'rows',
            key: String(key),
            payer: 'rawdb',
            value: toHex(new Uint8Array([step & 0xff, 2])),
          },
        },
      ]
    case 2: {
      const put = {
        scope,
        table: 'rows',
        key: String(key),
        payer: 'rawdb',
        value: toHex(new Uint8Array([step & 0xff, 3])),
      }
      const data = Serializer.encode({ abi: rawdb.abi, type: 'put', object: put }).hexString
      return [
        {
          account: 'rawdb',
          name: 'send',
          authorization: auth,
          data: { account: 'rawdb', name: 'put', authorization: auth, data },
        },
      ]
    }
    default: {
      const exists = devchain.chain.state.has(
        'contract_row',
        `rawdb\u0000${scope}\u0000rows\u0000${key.toString(16).padStart(16, '0')}`,
      )
      return exists
        ? [{ account: 'rawdb', name: 'erase', authorization: auth, data: { scope, table: 'rows', key: String(key) } }]
        : []
    }
  }
}

interface StepLog {
  readonly steps: Step[]
  readonly payloads: (StepPayload | undefined)[]
}

/** Reads the steps after the log's last one, and their payloads, in batches until none is left. */
async function readSteps(store: Store, log: StepLog = { steps: [], payloads: [] }): Promise<StepLog> {
  for (;;) {
    const batch = await store.stepsAfter(log.steps.at(-1)?.seq ?? 0, BATCH)
    if (batch.length === 0) return log
    log.steps.push(...batch)
    log.payloads.push(...(await store.stepPayloads(batch)))
  }
}

/**
 * Follows the step log while it is written, as a live hub does (on its own connection): each
 * step's payload is read soon after the step. `readWhileStored` holds the apply steps whose block
 * no undo had removed yet once their payload was read (the undo and its step commit together),
 * so their payload came from the stored block.
 */
function tailSteps(store: Store): { stop(): Promise<StepLog & { readWhileStored: Set<number> }> } {
  const log: StepLog = { steps: [], payloads: [] }
  const readWhileStored = new Set<number>()
  let stopping = false
  const running = (async () => {
    for (;;) {
      const batch = await store.stepsAfter(log.steps.at(-1)?.seq ?? 0, BATCH)
      if (batch.length === 0) {
        if (stopping) return { ...log, readWhileStored }
        await new Promise((r) => setTimeout(r, 2))
        continue
      }
      log.steps.push(...batch)
      log.payloads.push(...(await store.stepPayloads(batch)))
      const undoneSince = new Set(
        (await store.stepsAfter(batch[0].seq, 1_000_000)).filter((s) => s.type === 'undo').map((s) => s.blockId),
      )
      for (const s of batch) if (s.type !== 'undo' && !undoneSince.has(s.blockId)) readWhileStored.add(s.seq)
    }
  })()
  return {
    stop() {
      stopping = true
      return running
    },
  }
}

const hex = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('hex')
const rowKey = (code: string, table: string, scope: string, pk: string) => `${code}/${table}/${scope}/${pk}`
const pkText = (pk: bigint) => pk.toString(16).padStart(16, '0')
/** What the comparison keeps of an action: its sequence, block, who ran what, and its data. */
const actionText = (a: { blockNum: number; receiver: string; account: string; name: string; data: string }) =>
  `${a.blockNum} ${a.receiver} ${a.account}::${a.name} ${a.data}`

/**
 * Replays the step log from the start as a stream client would, applying each payload blindly: a
 * new or redo step adds the block's actions and row changes, an undo removes its actions and puts
 * each row back as the change's old version says. Checks on the way that every step has a
 * payload, that each change's old version is what the replay holds, and that the log is a chain
 * (an apply links to the top, an undo removes the top). Returns the actions, rows and blocks left.
 */
function replay(steps: readonly Step[], payloads: readonly (StepPayload | undefined)[]) {
  const actions = new Map<string, string>()
  const rows = new Map<string, string>()
  const chain: string[] = []
  const irreversible: string[] = []
  const rowText = (payer: string, value: Uint8Array | undefined) =>
    value === undefined ? undefined : `${payer}:${hex(value)}`
  for (const [i, step] of steps.entries()) {
    const p = payloads[i]
    const at = `step ${step.seq} ${step.type} ${step.blockNum}`
    assert.ok(p, `${at} has a payload`)
    assert.deepEqual(p.step, step)
    assert.equal(p.block.id, step.blockId, at)
    if (step.type === 'irreversible') {
      assert.ok(chain.includes(step.blockId), `${at}: an irreversible block is applied`)
      irreversible.push(step.blockId)
      continue
    }
    if (step.type === 'undo') {
      assert.equal(chain.pop(), step.blockId, `${at} undoes the top block`)
      for (const a of p.actions) {
        assert.equal(actions.get(String(a.globalSequence)), actionText({ ...a, data: hex(a.data) }), at)
        actions.delete(String(a.globalSequence))
      }
      for (const c of p.rowChanges) {
        const key = rowKey(c.code, c.table, c.scope, pkText(c.primaryKey))
        assert.equal(rows.get(key), rowText(c.payer, c.value), `${at}: ${key} is what the block left`)
        const old = c.old && rowText(c.old.payer, c.old.value)
        if (old === undefined) rows.delete(key)
        else rows.set(key, old)
      }
      continue
    }
    assert.equal(p.block.previous, chain.at(-1) ?? p.block.previous, `${at} links to the top block`)
    assert.equal(step.blockNum, chain.length + 1, at)
    chain.push(step.blockId)
    for (const a of p.actions) {
      assert.equal(actions.has(String(a.globalSequence)), false, `${at}: action ${a.globalSequence} is new`)
      actions.set(String(a.globalSequence), actionText({ ...a, data: hex(a.data) }))
    }
    for (const c of p.rowChanges) {
      const key = rowKey(c.code, c.table, c.scope, pkText(c.primaryKey))
      assert.equal(
        rows.get(key),
        c.old && rowText(c.old.payer, c.old.value),
        `${at}: ${key} was what the change replaced`,
      )
      const now = rowText(c.payer, c.value)
      if (now === undefined) rows.delete(key)
      else rows.set(key, now)
    }
  }
  return { actions, rows, chain, irreversible }
}

/** The store's actions and current rows, read from its tables directly. */
function canonical(dump: Record<string, unknown[]>) {
  const actions = new Map<string, string>()
  for (const r of dump.actions as Record<string, unknown>[]) {
    actions.set(
      String(r.global_seq),
      actionText({
        blockNum: Number(r.block_num),
        receiver: r.receiver as string,
        account: r.account as string,
        name: r.name as string,
        data: hex(r.data as Buffer),
      }),
    )
  }
  const rows = new Map<string, string>()
  let removed = 0
  for (const r of dump.row_versions as Record<string, unknown>[]) {
    if (r.valid_to !== null) continue
    if (r.value === null) removed++
    else
      rows.set(
        rowKey(r.code as string, r.tbl as string, r.scope as string, r.pk as string),
        `${r.payer as string}:${hex(r.value as Buffer)}`,
      )
  }
  const blocks = (dump.blocks as Record<string, unknown>[])
    .map((b) => ({ num: Number(b.num), id: b.id as string }))
    .sort((a, b) => a.num - b.num)
  return { actions, rows, removed, blocks: blocks.map((b) => b.id) }
}

const sorted = (map: Map<string, string>) => [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
/** A payload's content as plain data (bytes as hex, bigints as text, undefined fields left out). */
const plain = (p: StepPayload | undefined) => {
  if (!p) return p
  const { step: _step, ...content } = p
  return JSON.parse(
    JSON.stringify(content, (_k, v: unknown) =>
      typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? hex(v) : v,
    ),
  ) as unknown
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
    `fork steps on ${adapter.name} (seed ${SEED}): replaying the step log with its payloads ends with the live store's actions and rows, and its canonical steps are a fresh index's`,
    { skip: adapter.skip },
    async (t) => {
      const random = seededRandom(SEED)
      const devchain = await withDevchain(t, { libDepth: 6 })
      const liveBacking = await adapter.make(t, 'live')
      const liveStore = await liveBacking.open()
      onCleanup(t, () => liveStore.close())
      let undone = 0
      const live = createIndexer({
        shipUrl: devchain.ship,
        store: liveStore,
        onFork: (fork) => (undone += fork.undone),
      })
      const running = live.run()
      onCleanup(t, () => live.stop())
      const tailStore = await liveBacking.open()
      onCleanup(t, () => tailStore.close())
      const tail = tailSteps(tailStore)

      for (let step = 0; step < 60; step++) {
        const actions = randomActions(devchain, random, step)
        try {
          if (actions.length) pushSigned(devchain.chain, actions)
        } catch {
          // Refused by the chain (e.g. an erase racing a fork that removed the row): fine.
        }
        devchain.chain.produceBlock()
        const reversible = devchain.chain.head.num - devchain.chain.lib.blockNum
        if (reversible > 0 && random() < 0.3) devchain.chain.fork(1 + Math.floor(random() * Math.min(reversible, 5)))
        // The indexer catches up often, so forks cut blocks it holds.
        if (step % 3 === 0) {
          const at = devchain.chain.head.id
          await until(
            async () => (await liveStore.position())?.head.blockId === at || devchain.chain.head.id !== at,
            'the live indexer to catch up',
          )
        }
      }
      // Scope b ends empty: removals at head, whose rows the replay must have dropped.
      const erase = (key: number) => ({
        account: 'rawdb',
        name: 'erase',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { scope: 'b', table: 'rows', key: String(key) },
      })
      const stored = [0, 1, 2, 3, 4].filter((key) =>
        devchain.chain.state.has('contract_row', `rawdb\u0000b\u0000rows\u0000${key.toString(16).padStart(16, '0')}`),
      )
      if (stored.length) pushSigned(devchain.chain, stored.map(erase))
      for (let i = 0; i < 8; i++) devchain.chain.produceBlock()
      const head = devchain.chain.head
      await until(async () => (await liveStore.position())?.head.blockId === head.id, 'the live indexer to reach head')
      await live.stop()
      await running
      assert.ok(undone >= 5, `blocks undone: ${undone}`)

      // Read at the end, a forked-out block's payloads come from what its undo kept; read by the
      // tail, mostly from the block while it was stored: both must be the same.
      const { steps, payloads } = await readSteps(liveStore)
      const tailed = await tail.stop()
      assert.deepEqual(tailed.steps, steps)
      const forkedOut = new Set(steps.filter((s) => s.type === 'undo').map((s) => s.blockId))
      assert.ok(forkedOut.size >= 5)
      const readLiveThenKept = steps.filter(
        (s) => s.type === 'new' && forkedOut.has(s.blockId) && tailed.readWhileStored.has(s.seq),
      )
      assert.ok(
        readLiveThenKept.length >= 3,
        `the tail read ${readLiveThenKept.length} blocks while stored that forks removed later`,
      )
      for (const [i, s] of steps.entries())
        assert.deepEqual(plain(tailed.payloads[i]), plain(payloads[i]), `step ${s.seq} ${s.type} ${s.blockNum}`)
      const replayed = replay(steps, payloads)
      assert.deepEqual(replay(tailed.steps, tailed.payloads), replayed)
      const atHead = canonical(await liveBacking.dump())
      assert.deepEqual(replayed.chain, atHead.blocks, 'the replayed chain is the stored one')
      assert.deepEqual(sorted(replayed.actions), sorted(atHead.actions), 'the replay holds exactly the stored actions')
      assert.deepEqual(sorted(replayed.rows), sorted(atHead.rows), 'the replay holds exactly the rows at head')
      assert.ok(atHead.rows.size > 5 && atHead.actions.size > 50 && atHead.removed > 0)

      // A fresh index of the final chain sees no fork: its apply steps are the blocks the live log
      // left applied, with the same content, and the same blocks became irreversible.
      const freshBacking = await adapter.make(t, 'fresh')
      const freshStore = await freshBacking.open()
      onCleanup(t, () => freshStore.close())
      await createIndexer({ shipUrl: devchain.ship, store: freshStore, endBlockNum: head.num }).run()
      const fresh = await readSteps(freshStore)
      assert.deepEqual(
        fresh.steps.filter((s) => s.type !== 'new' && s.type !== 'irreversible'),
        [],
      )
      const freshApplied = fresh.steps.flatMap((s, i) =>
        s.type === 'new' ? [{ id: s.blockId, payload: fresh.payloads[i] }] : [],
      )
      assert.deepEqual(
        freshApplied.map((x) => x.id),
        replayed.chain,
      )
      assert.deepEqual(
        fresh.steps.filter((s) => s.type === 'irreversible').map((s) => s.blockId),
        replayed.irreversible,
      )
      const liveLast = new Map(
        steps.flatMap((s, i) => (s.type === 'new' || s.type === 'redo' ? [[s.blockId, payloads[i]] as const] : [])),
      )
      for (const x of freshApplied) assert.deepEqual(plain(liveLast.get(x.id)), plain(x.payload), `block ${x.id}`)
    },
  )
}
