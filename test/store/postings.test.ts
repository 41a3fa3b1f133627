import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  FLAG_INPUT,
  FLAG_NOTIF,
  FLAG_SCHEDULED,
  decodeEntries,
  termKey,
  type ActionRecord,
  type BlockBatch,
} from '../../src/store/index.ts'
import {
  MAX_CHUNK_ENTRIES,
  encodeEntries,
  postingChunks,
  seekEntry,
  type PostingChunk,
} from '../../src/store/search/postings.ts'
import { seededRandom } from '../_helpers/store.ts'

/** A block whose actions have these terms; action i is seq firstSeq + i, an input when its index is even. */
function block(num: number, firstSeq: number, terms: string[][], scheduled = false): BlockBatch {
  const trxId = String(num).padStart(64, '0')
  const actions: ActionRecord[] = terms.map((searchTerms, i) => ({
    globalSequence: firstSeq + i,
    blockNum: num,
    trxId,
    actionOrdinal: i + 1,
    creatorActionOrdinal: i % 2 === 0 ? 0 : 1,
    receiver: i % 3 === 0 ? 'bob' : 'alice',
    account: 'alice',
    name: 'transfer',
    authorization: [],
    data: new Uint8Array(0),
    returnValue: new Uint8Array(0),
    actDigest: '0'.repeat(64),
    recvSequence: 1n,
    ramDeltas: [],
    searchTerms,
  }))
  return {
    block: {
      num,
      id: trxId,
      previous: '',
      timestampMs: 0,
      producer: 'eosio',
      transactionCount: 1,
      actionCount: actions.length,
    },
    transactions: [{ id: trxId, blockNum: num, blockIndex: 0, status: 0, cpuUsageUs: 0, netUsageWords: 0, scheduled }],
    actions,
    rows: [],
    abis: [],
    permissions: [],
    links: [],
  }
}

/** Every chunk decoded, per key: [seq, flags] in chunk order. */
function lists(chunks: PostingChunk[]): Map<number, [number, number][]> {
  const out = new Map<number, [number, number][]>()
  for (const c of chunks) {
    const { seqs, flags } = decodeEntries(c.firstSeq, c.entries)
    assert.equal(seqs[0], c.firstSeq)
    assert.equal(seqs[seqs.length - 1], c.lastSeq)
    assert.ok(seqs.length <= MAX_CHUNK_ENTRIES)
    out.set(c.termKey, [
      ...(out.get(c.termKey) ?? []),
      ...Array.from(seqs, (seq, i): [number, number] => [seq, flags[i]]),
    ])
  }
  return out
}

test('postingChunks lists each action once under each of its terms, ascending, with its flags', () => {
  const batches = [block(10, 100, [['a', 'b'], ['b', 'b'], ['a']]), block(11, 103, [['b'], ['c']], true)]
  const got = lists(postingChunks(batches))
  const flags = (i: number, scheduled = false) =>
    (i % 2 === 0 ? FLAG_INPUT : 0) | (i % 3 === 0 ? FLAG_NOTIF : 0) | (scheduled ? FLAG_SCHEDULED : 0)
  assert.deepEqual(got.get(termKey('a')), [
    [100, flags(0)],
    [102, flags(2)],
  ])
  assert.deepEqual(
    got.get(termKey('b')),
    [
      [100, flags(0)],
      [101, flags(1)],
      [103, flags(0, true)],
    ],
    'a term listed twice by one action is one entry',
  )
  assert.deepEqual(got.get(termKey('c')), [[104, flags(1, true)]])
  assert.deepEqual(
    got.get(termKey('*'))?.map(([seq]) => seq),
    [100, 101, 102, 103, 104],
    'every action is under the all-actions term',
  )
  assert.equal(got.size, 4)
})

test('postingChunks splits a long list into chunks of at most MAX_CHUNK_ENTRIES', () => {
  const count = MAX_CHUNK_ENTRIES * 2 + 5
  const chunks = postingChunks([
    block(
      1,
      1000,
      Array.from({ length: count }, () => ['dense']),
    ),
  ]).filter((c) => c.termKey === termKey('dense'))
  assert.deepEqual(
    chunks.map((c) => decodeEntries(c.firstSeq, c.entries).seqs.length),
    [MAX_CHUNK_ENTRIES, MAX_CHUNK_ENTRIES, 5],
  )
  assert.deepEqual(
    lists(chunks)
      .get(termKey('dense'))
      ?.map(([seq]) => seq),
    Array.from({ length: count }, (_, i) => 1000 + i),
  )
})

test('postingChunks merges terms whose keys collide into one list, each action once', () => {
  const batches = [block(10, 100, [['x', 'y'], ['y'], ['x'], []])]
  const got = lists(postingChunks(batches, (term) => (term === '*' ? 1 : 7)))
  assert.deepEqual(
    got.get(7)?.map(([seq]) => seq),
    [100, 101, 102],
    'x and y share key 7: action 100 has both and is listed once',
  )
  assert.deepEqual(
    got.get(1)?.map(([seq]) => seq),
    [100, 101, 102, 103],
  )
})

test('seekEntry scanning a chunk in place lands where a search of its decoded entries does, both directions, with flag filters', () => {
  const random = seededRandom(11)
  for (let round = 0; round < 200; round++) {
    const seqs: number[] = []
    const flags: number[] = []
    let seq = 1 + Math.floor(random() * 2 ** 40)
    const count = 1 + Math.floor(random() * MAX_CHUNK_ENTRIES)
    for (let i = 0; i < count; i++) {
      seq += 1 + Math.floor(random() * (random() < 0.1 ? 100_000 : 5))
      seqs.push(seq)
      flags.push(Math.floor(random() * 8))
    }
    const entries = encodeEntries(seqs, flags)
    const decoded = decodeEntries(seqs[0], entries)
    assert.deepEqual(Array.from(decoded.seqs), seqs)
    for (let probe = 0; probe < 20; probe++) {
      const target = seqs[0] - 3 + Math.floor(random() * (seq - seqs[0] + 6))
      const mask = Math.floor(random() * 8)
      const value = mask & Math.floor(random() * 8)
      const passing = seqs.map((s, i) => ({ seq: s, flags: flags[i] })).filter((e) => (e.flags & mask) === value)
      const forward = passing.find((e) => e.seq >= target)
      const backward = passing.filter((e) => e.seq <= target).at(-1)
      assert.deepEqual(seekEntry(seqs[0], entries, target, true, mask, value), forward)
      assert.deepEqual(seekEntry(seqs[0], entries, target, false, mask, value), backward)
    }
  }
})
