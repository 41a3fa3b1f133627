import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { BlockBatch, Store } from '../../../src/store/index.ts'
import { mulberry32 } from '../../_helpers/random.ts'
import type { StoreFactory } from './store-contract.ts'

/**
 * Reads at past heights follow the keys a scope had by then (each version carries its key's first
 * block, schema version 6): every answer is checked against a brute-force replay of the writes.
 */

const CODE = 'rawdb'
const TABLE = 'rows'

/** A write: a value, or undefined for an erase (a tombstone). */
export interface RowWrite {
  scope: string
  pk: number
  value: number | undefined
}

/**
 * The chain a test writes and its brute-force model: the versions of the current branch, in
 * order. Block ids carry a branch number, so blocks written again after an undo are new blocks;
 * `reuse` keeps the undone ids (a redo of the same blocks).
 */
export class ModelChain {
  readonly ids = new Map<number, string>()
  versions: (RowWrite & { block: number })[] = []
  head = 0
  private branch = 0
  private readonly written = new Map<number, { id: string; rows: RowWrite[] }[]>()

  block(rows: RowWrite[], reuse = false): BlockBatch {
    const num = this.head + 1
    const id = reuse
      ? this.written.get(num)!.at(-1)!.id
      : num.toString(16).padStart(8, '0') + this.branch.toString(16).padStart(56, '0')
    if (!reuse) this.written.set(num, [...(this.written.get(num) ?? []), { id, rows }])
    const previous = num === 1 ? '0'.repeat(64) : this.ids.get(num - 1)!
    this.ids.set(num, id)
    this.head = num
    for (const r of rows) this.versions.push({ ...r, block: num })
    return {
      block: {
        num,
        id,
        previous,
        timestampMs: 1_000_000 + num * 500,
        producer: 'producera',
        transactionCount: 0,
        actionCount: 0,
      },
      transactions: [],
      actions: [],
      rows: rows.map((r) => ({
        code: CODE,
        table: TABLE,
        scope: r.scope,
        primaryKey: BigInt(r.pk),
        payer: `p${r.pk}`,
        value: r.value === undefined ? undefined : new Uint8Array([r.value, r.pk % 256]),
      })),
      abis: [],
      permissions: [],
      links: [],
    }
  }

  /** The rows `undoFrom(num)` leaves, and a new branch for the blocks written next. */
  undoFrom(num: number): void {
    this.versions = this.versions.filter((v) => v.block < num)
    for (let n = num; n <= this.head; n++) this.ids.delete(n)
    this.head = num - 1
    this.branch++
  }

  /** The rows the last `block` call wrote at `num` before an undo, to write them again. */
  undone(num: number): RowWrite[] {
    return this.written.get(num)!.at(-1)!.rows
  }

  scopes(): string[] {
    return [...new Set(this.versions.map((v) => v.scope))].sort()
  }

  /**
   * Rows at a height as `scope/pk=value@block`, in (scope, pk) order: each key's last version by then, unless a
   * tombstone.
   */
  rowsAt(blockNum: number, scopes: readonly string[]): string[] {
    const last = new Map<string, RowWrite & { block: number }>()
    for (const v of this.versions)
      if (v.block <= blockNum && scopes.includes(v.scope)) last.set(`${v.scope}/${v.pk}`, v)
    return [...last.values()]
      .filter((v) => v.value !== undefined)
      .sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : a.pk - b.pk))
      .map((v) => `${v.scope}/${v.pk}=${v.value}@${v.block}`)
  }
}

const shown = (scope: string, r: { primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }) => {
  assert.equal(r.payer, `p${r.primaryKey}`)
  assert.equal(r.value[1], Number(r.primaryKey) % 256)
  return `${scope}/${r.primaryKey}=${r.value[0]}@${r.blockNum}`
}

/**
 * Every scope's rows, the rows of all scopes at once, and the scopes with rows, at every height up to past head,
 * against the model.
 */
export async function assertEveryHeight(store: Store, chain: ModelChain, what: string): Promise<void> {
  const scopes = [...chain.scopes(), 'never']
  for (let h = 0; h <= chain.head + 1; h++) {
    for (const scope of scopes) {
      const rows = await store.tableRows({ code: CODE, table: TABLE, scope, blockNum: h })
      assert.deepEqual(
        rows.map((r) => shown(scope, r)),
        chain.rowsAt(h, [scope]),
        `${what}: scope ${scope} at ${h} (head ${chain.head})`,
      )
    }
    const all = await store.tableRowsOfScopes({ code: CODE, table: TABLE, scopes: [...scopes].reverse(), blockNum: h })
    assert.deepEqual(
      all.map((r) => shown(r.scope, r)),
      chain.rowsAt(h, scopes),
      `${what}: all scopes at ${h} (head ${chain.head})`,
    )
    const live = scopes.filter((s) => chain.rowsAt(h, [s]).length > 0)
    assert.deepEqual(
      await store.scopes({ code: CODE, table: TABLE, blockNum: h }),
      live,
      `${what}: scopes at ${h} (head ${chain.head})`,
    )
  }
}

const w = (scope: string, pk: number, value: number | undefined): RowWrite => ({ scope, pk, value })

/** Every first-block test, run against one adapter. */
export function runFirstBlockContract(name: string, factory: StoreFactory, skip: string | false = false): void {
  test(
    `${name}: a scope that grew after a height answers exactly its rows at that height, in key order`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const chain = new ModelChain()
      // Early keys out of key order, then many more keys, some below the early ones, in later blocks.
      await store.applyBlock(chain.block([w('grown', 900, 1), w('grown', 40, 1), w('other', 5, 1)]), 0)
      await store.applyBlock(chain.block([w('grown', 500, 2), w('grown', 40, 2)]), 0)
      for (let b = 3; b <= 6; b++)
        await store.applyBlock(
          chain.block(Array.from({ length: 30 }, (_, i) => w('grown', (i * 37 + b * 101) % 1000, b))),
          0,
        )
      assert.deepEqual(
        (await store.tableRows({ code: CODE, table: TABLE, scope: 'grown', blockNum: 2 })).map((r) =>
          shown('grown', r),
        ),
        ['grown/40=2@2', 'grown/500=2@2', 'grown/900=1@1'],
      )
      assert.deepEqual(
        (await store.tableRows({ code: CODE, table: TABLE, scope: 'grown', blockNum: 1 })).map((r) =>
          shown('grown', r),
        ),
        ['grown/40=1@1', 'grown/900=1@1'],
      )
      assert.deepEqual(await store.scopes({ code: CODE, table: TABLE, blockNum: 0 }), [])
      await assertEveryHeight(store, chain, 'grown scope')
    },
  )

  test(
    `${name}: a key erased and written again is read at every height, before the erase included`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const chain = new ModelChain()
      await store.applyBlock(chain.block([w('alice', 7, 1), w('alice', 9, 1)]), 0)
      await store.applyBlock(chain.block([w('alice', 7, undefined), w('bob', 1, 2)]), 0)
      await store.applyBlock(chain.block([w('bob', 1, undefined)]), 0)
      await store.applyBlock(chain.block([w('alice', 7, 4)]), 0)
      await store.applyBlock(chain.block([w('alice', 7, 5), w('bob', 1, 5)]), 0)
      assert.deepEqual(
        (await store.tableRows({ code: CODE, table: TABLE, scope: 'alice', blockNum: 1 })).map((r) =>
          shown('alice', r),
        ),
        ['alice/7=1@1', 'alice/9=1@1'],
      )
      assert.deepEqual(await store.scopes({ code: CODE, table: TABLE, blockNum: 3 }), ['alice'])
      await assertEveryHeight(store, chain, 'erased and written again')
    },
  )

  test(
    `${name}: keys written several times within one applyBlocks() write keep their first block, new or not`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const chain = new ModelChain()
      await store.applyBlocks([chain.block([w('alice', 1, 1), w('alice', 2, 1)])], 0)
      // One write: key 3 new in its first block and written in each later one; key 1 existing before it.
      const blocks = [
        chain.block([w('alice', 3, 2), w('alice', 1, 2)]),
        chain.block([w('alice', 3, 3), w('alice', 1, 3), w('bob', 8, 3)]),
        chain.block([w('alice', 3, undefined), w('bob', 8, 4)]),
        chain.block([w('alice', 3, 5), w('alice', 2, undefined)]),
      ]
      await store.applyBlocks(blocks, 0)
      assert.deepEqual(
        (await store.tableRows({ code: CODE, table: TABLE, scope: 'alice', blockNum: 2 })).map((r) =>
          shown('alice', r),
        ),
        ['alice/1=2@2', 'alice/2=1@1', 'alice/3=2@2'],
      )
      assert.deepEqual(
        (await store.tableRows({ code: CODE, table: TABLE, scope: 'alice', blockNum: 1 })).map((r) =>
          shown('alice', r),
        ),
        ['alice/1=1@1', 'alice/2=1@1'],
      )
      await assertEveryHeight(store, chain, 'one write')
    },
  )

  test(
    `${name}: undo across a key's first write and a rewrite, then the same blocks again, then another branch`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const chain = new ModelChain()
      await store.applyBlock(chain.block([w('alice', 1, 1)]), 0)
      await store.applyBlock(chain.block([w('alice', 2, 2), w('alice', 1, 2)]), 0)
      await store.applyBlock(chain.block([w('alice', 2, 3), w('alice', 3, 3), w('bob', 1, 3)]), 0)
      await assertEveryHeight(store, chain, 'before the undo')
      await store.undoFrom(2)
      chain.undoFrom(2)
      // Key 1's version of block 1 is current again, with its own first block: the read at 1 finds it.
      assert.deepEqual(
        (await store.tableRows({ code: CODE, table: TABLE, scope: 'alice', blockNum: 1 })).map((r) =>
          shown('alice', r),
        ),
        ['alice/1=1@1'],
      )
      await assertEveryHeight(store, chain, 'after the undo')
      await store.applyBlocks(
        [
          chain.block([w('alice', 2, 2), w('alice', 1, 2)], true),
          chain.block([w('alice', 2, 3), w('alice', 3, 3), w('bob', 1, 3)], true),
        ],
        0,
      )
      await assertEveryHeight(store, chain, 'after the redo')
      await store.undoFrom(2)
      chain.undoFrom(2)
      await store.applyBlock(chain.block([w('alice', 3, 12)]), 0)
      await store.applyBlock(chain.block([w('alice', 2, 13), w('alice', 3, 13)]), 0)
      await assertEveryHeight(store, chain, 'on another branch')
    },
  )

  test(
    `${name}: reads at every height equal a replay of random writes, erases, multi-block writes and undos`,
    { skip },
    async (t) => {
      for (const seed of [1, 2, 3]) {
        const store = await (await factory(t)).open()
        t.after(() => store.close())
        const random = mulberry32(seed * 7919)
        const scopes = ['a', 'b', 'c']
        const chain = new ModelChain()
        while (chain.head < 40) {
          const count = 1 + Math.floor(random() * 4)
          const blocks = Array.from({ length: count }, () => {
            const rows = new Map<string, RowWrite>()
            for (let i = Math.floor(random() * 6); i > 0; i--) {
              const r = w(
                scopes[Math.floor(random() * scopes.length)],
                Math.floor(random() * 12) * 37,
                random() < 0.2 ? undefined : Math.floor(random() * 250),
              )
              rows.set(`${r.scope}/${r.pk}`, r)
            }
            return chain.block([...rows.values()])
          })
          await store.applyBlocks(blocks, 0)
          if (random() < 0.2 && chain.head > 3) {
            const from = chain.head - Math.floor(random() * 3)
            await store.undoFrom(from)
            chain.undoFrom(from)
            if (random() < 0.5) await store.applyBlock(chain.block(chain.undone(from), true), 0)
            await assertEveryHeight(store, chain, `seed ${seed}, after an undo from ${from}`)
          }
        }
        await assertEveryHeight(store, chain, `seed ${seed}`)
      }
    },
  )
}
