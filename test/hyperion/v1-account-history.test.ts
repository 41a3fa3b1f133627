import { test } from 'node:test'
import assert from 'node:assert/strict'
import { nodeosActionWindow, NODEOS_NO_HISTORY_POS } from '../../src/hyperion/v1-action-window.ts'
import { AccountHistoryIndex, type AccountHistoryStore } from '../../src/hyperion/v1-account-history.ts'
import type { SearchExpr, SearchMatch, SearchRange } from '../../src/store/index.ts'

/** nodeos's history_plugin loop, written as it is: pos -1 → last seq + 1, then the start/end rules, every entry. */
function nodeosBruteForce(pos: number, offset: number, count: number): number[] {
  let p = pos
  if (p === -1) p = count > 0 ? count : NODEOS_NO_HISTORY_POS
  let start: number
  let end: number
  if (offset > 0) {
    start = p
    end = start + offset
  } else {
    start = p + offset
    end = p
  }
  const out: number[] = []
  for (let seq = 0; seq < count; seq++) if (seq >= start && seq <= end) out.push(seq)
  return out
}

/** A tiny deterministic generator, so a failure is reproducible from its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

test('nodeos window: the entries pos/offset select, against the history_plugin loop, randomized', () => {
  const rnd = random(35)
  const pick = (values: number[]) => values[Math.floor(rnd() * values.length)]
  for (let run = 0; run < 20_000; run++) {
    const count = pick([0, 1, 2, 5, 20, 21, 100, Math.floor(rnd() * 3000)])
    const pos = pick([-1, 0, 1, count - 1, count, count + 1, Math.floor(rnd() * (count + 50))])
    if (pos < -1) continue
    const offset = pick([-20, -1, 0, 1, 20, -count, count, Math.floor(rnd() * 200) - 100, -100_000, 100_000])
    const max = pick([1000, 10, 1])
    const expected = nodeosBruteForce(pos, offset, count)
    const w = nodeosActionWindow({ pos, offset, count, max })
    const got: number[] = []
    for (let i = w.first; i <= w.last; i++) got.push(i)
    const context = JSON.stringify({ pos, offset, count, max })
    assert.deepEqual(got, expected.slice(0, max), context)
    assert.equal(w.truncated, expected.length > max, context)
  }
})

test('nodeos window: the defaults (pos -1, offset -20) are the last 20 entries; no history is empty', () => {
  assert.deepEqual(nodeosActionWindow({ pos: -1, offset: -20, count: 100, max: 1000 }), {
    first: 80,
    last: 99,
    truncated: false,
  })
  // No history: pos is nodeos's placeholder, far past any entry.
  const w = nodeosActionWindow({ pos: -1, offset: -20, count: 0, max: 1000 })
  assert.ok(w.first > w.last)
})

interface FakeAction {
  seq: number
  block: number
  terms: Set<string>
}

/** A store of actions in memory: search, position and firstSeqFromBlock over them, with forks and LIB. */
class FakeStore implements AccountHistoryStore {
  actions: FakeAction[] = []
  lib = 0
  head = 0
  reads = 0
  matchesRead = 0

  private matches(expr: SearchExpr, a: FakeAction): boolean {
    if ('term' in expr) return a.terms.has(expr.term)
    if ('or' in expr) return expr.or.some((e) => this.matches(e, a))
    if ('and' in expr) return expr.and.every((e) => this.matches(e, a))
    throw new Error('not in the fake')
  }

  async searchActions(args: { query: SearchExpr } & SearchRange): Promise<SearchMatch[]> {
    this.reads++
    const forward = args.direction === 'forward'
    const list = forward ? this.actions : [...this.actions].reverse()
    const out: SearchMatch[] = []
    for (const a of list) {
      if (out.length >= args.limit) break
      if (args.fromSeq !== undefined && (forward ? a.seq < args.fromSeq : a.seq > args.fromSeq)) continue
      if (args.toSeq !== undefined && (forward ? a.seq > args.toSeq : a.seq < args.toSeq)) break
      if (this.matches(args.query, a)) out.push({ seq: a.seq, flags: 0 })
    }
    this.matchesRead += out.length
    return out
  }

  async position() {
    return this.head === 0 ? undefined : { head: { blockNum: this.head, blockId: '' }, lib: this.lib }
  }

  async firstSeqFromBlock(blockNum: number) {
    return this.actions.find((a) => a.block >= blockNum)?.seq
  }
}

const ACCOUNTS = ['alice', 'bob', 'carol', 'dave']

/** Appends blocks with an onblock action and random actions of the accounts (receiver and actor). */
function grow(store: FakeStore, rnd: () => number, blocks: number, nextSeq: () => number): void {
  for (let b = 0; b < blocks; b++) {
    store.head++
    store.actions.push({ seq: nextSeq(), block: store.head, terms: new Set(['receiver:eosio', 'auth:eosio']) })
    const n = Math.floor(rnd() * 6)
    for (let i = 0; i < n; i++) {
      const receiver = ACCOUNTS[Math.floor(rnd() * ACCOUNTS.length)]
      const actor = ACCOUNTS[Math.floor(rnd() * ACCOUNTS.length)]
      store.actions.push({
        seq: nextSeq(),
        block: store.head,
        terms: new Set([`receiver:${receiver}`, `auth:${actor}`]),
      })
    }
  }
}

test('account history: numbers and windows equal a brute-force list through growth, LIB moves and forks', async () => {
  const rnd = random(7)
  const store = new FakeStore()
  let seq = 1
  const nextSeq = () => seq++
  const index = new AccountHistoryIndex(store, { checkpointEvery: 7, page: 5, maxAccounts: 3 })
  for (let round = 0; round < 200; round++) {
    grow(store, rnd, 1 + Math.floor(rnd() * 8), nextSeq)
    store.lib = Math.max(store.lib, store.head - Math.floor(rnd() * 6))
    if (rnd() < 0.3 && store.head > store.lib) {
      // A fork: the blocks above a point over LIB are undone (their sequences are given again, as on a chain).
      const from = store.lib + 1 + Math.floor(rnd() * (store.head - store.lib))
      store.actions = store.actions.filter((a) => a.block < from)
      store.head = from - 1
      seq = (store.actions.at(-1)?.seq ?? 0) + 1
      grow(store, rnd, Math.floor(rnd() * 4), nextSeq)
    }
    const account = ACCOUNTS[Math.floor(rnd() * ACCOUNTS.length)]
    const expected = store.actions
      .filter((a) => a.terms.has(`receiver:${account}`) || a.terms.has(`auth:${account}`))
      .map((a) => a.seq)
    const history = await index.open(account)
    assert.equal(history.count, expected.length, `round ${round}`)
    const first = Math.floor(rnd() * (expected.length + 3)) - 2
    const last = first + Math.floor(rnd() * 30)
    const got = await history.entries(first, last)
    const want = expected
      .map((s, i) => ({ accountActionSeq: i, globalSequence: s }))
      .filter((e) => e.accountActionSeq >= first && e.accountActionSeq <= last)
    assert.deepEqual(got, want, `round ${round}, entries ${first}..${last}`)
  }
  assert.ok(index.size <= 3)
})

test('account history: the irreversible part is walked once; later requests walk the tail and a checkpoint stretch', async () => {
  const rnd = random(11)
  const store = new FakeStore()
  let seq = 1
  grow(store, rnd, 2000, () => seq++)
  store.lib = store.head - 3
  const index = new AccountHistoryIndex(store, { checkpointEvery: 64, page: 1000 })
  const opened = await index.open('alice')
  assert.ok(opened.count > 1000)
  const walkedOnce = store.matchesRead
  assert.ok(walkedOnce >= opened.count)
  store.matchesRead = 0
  const again = await index.open('alice')
  assert.equal(again.count, opened.count)
  const middle = Math.floor(again.count / 2)
  const entries = await again.entries(middle, middle + 9)
  assert.equal(entries.length, 10)
  assert.equal(entries[0].accountActionSeq, middle)
  // The tail above LIB (3 blocks) and at most one checkpoint stretch plus the 10 entries.
  assert.ok(store.matchesRead < 64 + 10 + 3 * 6, `read ${store.matchesRead} matches`)
})

test('account history: a walk longer than the wait answers 503 (retryable) and goes on, so a retry finds it done', async () => {
  const rnd = random(3)
  const store = new FakeStore()
  let seq = 1
  grow(store, rnd, 300, () => seq++)
  store.lib = store.head - 2
  // Each read of the store takes 5 ms: the walk of ~400 matches by pages of 10 takes ~200 ms.
  const slow: AccountHistoryStore = {
    searchActions: async (args) => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      return store.searchActions(args)
    },
    position: () => store.position(),
    firstSeqFromBlock: (n) => store.firstSeqFromBlock(n),
  }
  const index = new AccountHistoryIndex(slow, { page: 10, waitMs: 30 })
  await assert.rejects(index.open('alice'), (e: unknown) => {
    const error = e as { code?: string; status?: number }
    return error.code === 'service_unavailable_error' && error.status === 503
  })
  const expected = store.actions.filter((a) => a.terms.has('receiver:alice') || a.terms.has('auth:alice')).length
  await new Promise((resolve) => setTimeout(resolve, 600))
  const readsBefore = store.reads
  const history = await index.open('alice')
  assert.equal(history.count, expected)
  assert.ok(store.reads - readsBefore < 5, 'the retry walked only the tail')
})
