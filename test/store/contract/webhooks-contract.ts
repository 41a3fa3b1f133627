import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store, WebhookAttemptRecord, WebhookRecord } from '../../../src/store/index.ts'
import { emptyBlock, type KeysStoreFactory } from './keys-contract.ts'

/**
 * What a store opened read-only does with webhook writes: PostgreSQL writes them (API replicas open the store
 * read-only for chain data but keep webhook records), SQLite's read-only connection refuses them (the driver's error).
 */
export type ReadOnlyWebhookWrites = 'written' | 'refused'

/** A subscription with only the required fields, owned by `owner`, created at `createdAtMs`. */
export const webhook = (
  id: string,
  owner: string,
  createdAtMs: number,
  changes: Partial<WebhookRecord> = {},
): WebhookRecord => ({
  id,
  ownerKeyId: owner,
  url: `https://hooks.example/${id}`,
  query: 'receiver:eosio.token action:transfer',
  finality: 'irreversible',
  secret: `whsec_${id}`,
  paused: false,
  cursor: '',
  startBlock: 100,
  createdAtMs,
  updatedAtMs: createdAtMs,
  ...changes,
})

/** Every optional field present, every field away from its default. */
const full = (id: string, owner: string, createdAtMs: number) =>
  webhook(id, owner, createdAtMs, {
    finality: 'reversible',
    previousSecret: { secret: 'whsec_old', untilMs: 9_000_000_000_000 },
    paused: true,
    disabled: { reason: 'gone: the target answered 410', atMs: 5_000 },
    cursor: 'c0ffee:1',
    startBlock: 4_000_000_000,
    failingSinceMs: 4_000,
    updatedAtMs: createdAtMs + 1,
  })

const attempt = (
  webhookId: string,
  messageId: string,
  n: number,
  atMs: number,
  changes: Partial<WebhookAttemptRecord> = {},
): WebhookAttemptRecord => ({
  webhookId,
  messageId,
  attempt: n,
  atMs,
  status: 200,
  durationMs: 12,
  error: null,
  responseBody: 'ok',
  afterPosition: `block:${n}`,
  ...changes,
})

const refusedWith = (code: string) => (e: { code?: string }) => e.code === code
const ids = (records: readonly { id: string }[]) => records.map((r) => r.id)
const attemptKeys = (records: readonly WebhookAttemptRecord[]) => records.map((a) => `${a.messageId}#${a.attempt}`)

/** The WebhookStore port, run against one adapter. */
export function runWebhooksContract(
  name: string,
  factory: KeysStoreFactory,
  readOnlyWrites: ReadOnlyWebhookWrites,
  skip: string | false = false,
): void {
  const withStore = (title: string, body: (store: Store) => Promise<void>) =>
    test(`${name}: ${title}`, { skip }, async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      await body(store)
    })

  withStore('a subscription reads back as stored, every optional field present or absent', async (store) => {
    const minimal = webhook('wh_min', 'key_a', 1_000)
    const complete = full('wh_full', 'key_a', 2_000)
    const unowned = webhook('wh_open', '', 3_000)
    for (const r of [minimal, complete, unowned]) await store.insertWebhook(r)
    assert.deepEqual(await store.webhook('wh_min'), minimal)
    assert.deepEqual(await store.webhook('wh_full'), complete)
    assert.deepEqual(await store.webhook('wh_open'), unowned)
    assert.equal(await store.webhook('wh_nope'), undefined)
    assert.deepEqual(await store.webhooksOf('key_a'), [minimal, complete])
    assert.deepEqual(await store.webhooksOf(''), [unowned])
    assert.deepEqual(await store.webhooksOf('key_nobody'), [])
    assert.equal(await store.webhookCount('key_a'), 2)
    assert.equal(await store.webhookCount(''), 1)
    assert.equal(await store.webhookCount('key_nobody'), 0)
  })

  withStore("webhooksOf() lists an owner's subscriptions oldest first, ties by id", async (store) => {
    for (const [id, at] of [
      ['wh_c', 30],
      ['wh_b', 10],
      ['wh_z', 20],
      ['wh_a', 20],
    ] as const)
      await store.insertWebhook(webhook(id, 'key_a', at))
    await store.insertWebhook(webhook('wh_other', 'key_b', 5))
    assert.deepEqual(ids(await store.webhooksOf('key_a')), ['wh_b', 'wh_a', 'wh_z', 'wh_c'])
    assert.equal(await store.webhookCount('key_a'), 4)
  })

  withStore('a taken id is refused with store_webhook_exists_error and changes nothing', async (store) => {
    const first = webhook('wh_1', 'key_a', 1_000)
    await store.insertWebhook(first)
    await assert.rejects(
      store.insertWebhook(webhook('wh_1', 'key_b', 2_000, { url: 'https://other.example/' })),
      refusedWith('store_webhook_exists_error'),
    )
    assert.deepEqual(await store.webhook('wh_1'), first)
    assert.equal(await store.webhookCount('key_b'), 0)
  })

  withStore(
    'with a limit, insertWebhook() stores below it, answers false at it, and counts each owner apart',
    async (store) => {
      assert.equal(await store.insertWebhook(webhook('wh_1', 'key_a', 1_000), 2), true)
      assert.equal(await store.insertWebhook(webhook('wh_2', 'key_a', 1_001), 2), true)
      assert.equal(await store.insertWebhook(webhook('wh_3', 'key_a', 1_002), 2), false)
      assert.equal(
        await store.insertWebhook(webhook('wh_4', 'key_b', 1_003), 2),
        true,
        "key_a's do not count for key_b",
      )
      await assert.rejects(
        store.insertWebhook(webhook('wh_4', 'key_b', 1_004), 2),
        refusedWith('store_webhook_exists_error'),
        'a taken id below the limit is still refused',
      )
      assert.equal(await store.insertWebhook(webhook('wh_5', 'key_a', 1_005)), true, 'without a limit: stored')
      assert.deepEqual(ids(await store.webhooksOf('key_a')), ['wh_1', 'wh_2', 'wh_5'])
      assert.deepEqual(ids(await store.webhooksOf('key_b')), ['wh_4'])
    },
  )

  test(
    `${name}: of 20 concurrent inserts of one owner with a limit of 5, from two stores on one backing, exactly 5 are stored`,
    { skip },
    async (t) => {
      // Two stores: on PostgreSQL two sets of pools, as two API replicas have.
      const backing = await factory(t)
      const stores = await Promise.all([backing.open(), backing.open()])
      t.after(() => Promise.all(stores.map((s) => s.close())))
      const [a, b] = stores
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => stores[i % 2].insertWebhook(webhook(`wh_${i}`, 'key_a', 1_000 + i), 5)),
      )
      assert.equal(answers.filter(Boolean).length, 5, `stored: ${answers.map(Number).join('')}`)
      assert.equal(await a.webhookCount('key_a'), 5)
      assert.equal((await b.webhooksOf('key_a')).length, 5)
    },
  )

  withStore(
    'updateWebhook() changes only the named fields, clears with null, sets updatedAtMs, and answers undefined for an unknown id',
    async (store) => {
      const before = webhook('wh_1', 'key_a', 1_000)
      const bystander = full('wh_2', 'key_a', 1_500)
      await store.insertWebhook(before)
      await store.insertWebhook(bystander)
      let expected: WebhookRecord = before
      const changes: Partial<WebhookRecord>[] = [
        { url: 'https://new.example/hook' },
        { query: 'account:eosio' },
        { finality: 'reversible' },
        { secret: 'whsec_new', previousSecret: { secret: 'whsec_wh_1', untilMs: 86_400_000 } },
        { paused: true },
        { disabled: { reason: 'failing for 5 days', atMs: 7_000 } },
        { cursor: 'abc:2' },
        { startBlock: 123 },
        { failingSinceMs: 6_000 },
      ]
      let now = 2_000
      for (const change of changes) {
        now += 1
        expected = { ...expected, ...change, updatedAtMs: now }
        assert.deepEqual(await store.updateWebhook('wh_1', change, now), expected, JSON.stringify(change))
        assert.deepEqual(await store.webhook('wh_1'), expected)
      }
      // A field given as undefined is not named; several fields at once.
      expected = { ...expected, paused: false, url: 'https://b.example/', updatedAtMs: 3_000 }
      assert.deepEqual(
        await store.updateWebhook('wh_1', { paused: false, url: 'https://b.example/', query: undefined }, 3_000),
        expected,
      )
      // null clears each optional field; an empty patch only touches updatedAtMs.
      const cleared = await store.updateWebhook(
        'wh_1',
        { previousSecret: null, disabled: null, failingSinceMs: null },
        3_001,
      )
      const { previousSecret: _p, disabled: _d, failingSinceMs: _f, ...rest } = expected
      assert.deepEqual(cleared, { ...rest, updatedAtMs: 3_001 })
      assert.deepEqual(await store.updateWebhook('wh_1', {}, 3_002), { ...rest, updatedAtMs: 3_002 })
      assert.deepEqual(await store.webhook('wh_1'), { ...rest, updatedAtMs: 3_002 })

      assert.equal(await store.updateWebhook('wh_nope', { paused: true }, 4_000), undefined)
      assert.equal(await store.webhook('wh_nope'), undefined)
      assert.deepEqual(await store.webhook('wh_2'), bystander, 'the other subscription is untouched')
    },
  )

  withStore(
    'updateWebhook() with expectCursor is a compare-and-set: a stale cursor changes nothing, one of two racers wins',
    async (store) => {
      const before = webhook('wh_1', 'key_a', 1_000, { cursor: 'c:1' })
      await store.insertWebhook(before)
      assert.equal(await store.updateWebhook('wh_1', { cursor: 'c:2', failingSinceMs: 9 }, 2_000, 'c:0'), undefined)
      assert.equal(await store.updateWebhook('wh_1', { cursor: 'c:2' }, 2_000, ''), undefined)
      assert.deepEqual(await store.webhook('wh_1'), before, 'a refused compare-and-set changes nothing')

      const advanced = await store.updateWebhook('wh_1', { cursor: 'c:2', failingSinceMs: null }, 2_001, 'c:1')
      assert.deepEqual(advanced, { ...before, cursor: 'c:2', updatedAtMs: 2_001 })
      // A second dispatcher that read c:1 before the first advanced it.
      assert.equal(await store.updateWebhook('wh_1', { cursor: 'c:3' }, 2_002, 'c:1'), undefined)
      assert.equal((await store.webhook('wh_1'))?.cursor, 'c:2')

      const racers = await Promise.all(
        ['a', 'b', 'c', 'd'].map((who) => store.updateWebhook('wh_1', { cursor: `c:3${who}` }, 2_003, 'c:2')),
      )
      const winners = racers.filter((r) => r !== undefined)
      assert.equal(winners.length, 1, 'exactly one racer advanced the cursor')
      assert.equal((await store.webhook('wh_1'))?.cursor, winners[0]?.cursor)
      assert.equal(await store.updateWebhook('wh_nope', { cursor: 'x' }, 2_004, ''), undefined)

      withStore(
        'recordWebhookDelivery() logs the attempt and advances the cursor by compare-and-set; a stale one logs only',
        async (store) => {
          const before = webhook('wh_1', 'key_a', 1_000, { cursor: 'c:1', failingSinceMs: 500 })
          await store.insertWebhook(before)
          const first = attempt('wh_1', 'msg_1', 1, 5_000)
          const advanced = await store.recordWebhookDelivery(first, {
            cursor: 'c:2',
            expectCursor: 'c:1',
            nowMs: 5_010,
          })
          const { failingSinceMs: _cleared, ...rest } = before
          assert.deepEqual(advanced, { ...rest, cursor: 'c:2', updatedAtMs: 5_010 })
          assert.deepEqual(await store.webhook('wh_1'), advanced)

          // A replay (or another dispatcher) moved the cursor: the delivery is still logged, the cursor stays.
          const stale = attempt('wh_1', 'msg_2', 1, 6_000)
          assert.equal(
            await store.recordWebhookDelivery(stale, { cursor: 'c:3', expectCursor: 'c:1', nowMs: 6_010 }),
            undefined,
          )
          assert.equal((await store.webhook('wh_1'))?.cursor, 'c:2')
          assert.deepEqual(attemptKeys(await store.webhookAttempts('wh_1', { limit: 10 })), ['msg_2#1', 'msg_1#1'])
          assert.deepEqual(await store.lastWebhookAttempt('wh_1', 'msg_1'), first)
        },
      )
    },
  )

  withStore('activeWebhooks() lists the subscriptions neither paused nor disabled', async (store) => {
    await store.insertWebhook(webhook('wh_live', 'key_a', 1_000))
    await store.insertWebhook(webhook('wh_paused', 'key_a', 1_001, { paused: true }))
    await store.insertWebhook(webhook('wh_gone', 'key_b', 1_002, { disabled: { reason: '410', atMs: 1 } }))
    await store.insertWebhook(webhook('wh_other', 'key_b', 1_003, { failingSinceMs: 5 }))
    assert.deepEqual(ids(await store.activeWebhooks()), ['wh_live', 'wh_other'])
    await store.updateWebhook('wh_paused', { paused: false }, 2_000)
    await store.updateWebhook('wh_live', { disabled: { reason: 'failing', atMs: 2_000 } }, 2_000)
    await store.updateWebhook('wh_gone', { disabled: null, paused: true }, 2_000)
    assert.deepEqual(ids(await store.activeWebhooks()), ['wh_paused', 'wh_other'])
    assert.deepEqual(await store.activeWebhooks(), [await store.webhook('wh_paused'), await store.webhook('wh_other')])
  })

  withStore(
    'attempts read back newest first (time, then attempt), at most limit, paged by beforeMs, pruned by age',
    async (store) => {
      await store.insertWebhook(webhook('wh_1', 'key_a', 1_000))
      await store.insertWebhook(webhook('wh_2', 'key_a', 1_000))
      const failed = attempt('wh_1', 'msg_1', 1, 10_000, {
        status: null,
        durationMs: 10_000,
        error: 'timeout',
        responseBody: null,
      })
      const refused = attempt('wh_1', 'msg_1', 2, 20_000, {
        status: 503,
        error: 'http_status',
        responseBody: 'x'.repeat(20_000),
      })
      const delivered = attempt('wh_1', 'msg_1', 3, 30_000)
      const next = attempt('wh_1', 'msg_2', 1, 30_000, { durationMs: 3 })
      const later = attempt('wh_1', 'msg_3', 1, 40_000, { status: 410, error: 'http_status', responseBody: '' })
      const elsewhere = attempt('wh_2', 'msg_9', 1, 35_000)
      for (const a of [delivered, failed, elsewhere, later, refused, next]) await store.insertWebhookAttempt(a)

      assert.deepEqual(await store.webhookAttempts('wh_1', { limit: 10 }), [later, delivered, next, refused, failed])
      assert.deepEqual(attemptKeys(await store.webhookAttempts('wh_1', { limit: 2 })), ['msg_3#1', 'msg_1#3'])
      assert.deepEqual(attemptKeys(await store.webhookAttempts('wh_1', { limit: 2, beforeMs: 30_000 })), [
        'msg_1#2',
        'msg_1#1',
      ])
      assert.deepEqual(attemptKeys(await store.webhookAttempts('wh_1', { limit: 10, beforeMs: 30_001 })), [
        'msg_1#3',
        'msg_2#1',
        'msg_1#2',
        'msg_1#1',
      ])
      assert.deepEqual(await store.webhookAttempts('wh_1', { limit: 10, beforeMs: 10_000 }), [])
      assert.deepEqual(await store.webhookAttempts('wh_2', { limit: 10 }), [elsewhere])
      assert.deepEqual(await store.webhookAttempts('wh_nope', { limit: 10 }), [])
      assert.deepEqual(await store.lastWebhookAttempt('wh_1', 'msg_1'), delivered, "a message's latest attempt")
      assert.equal(await store.lastWebhookAttempt('wh_2', 'msg_1'), undefined, "another subscription's message")

      assert.equal(await store.pruneWebhookAttempts(30_000), 2, 'the two attempts before 30,000 ms')
      assert.deepEqual(attemptKeys(await store.webhookAttempts('wh_1', { limit: 10 })), [
        'msg_3#1',
        'msg_1#3',
        'msg_2#1',
      ])
      assert.equal(await store.pruneWebhookAttempts(30_000), 0)
      assert.equal(await store.pruneWebhookAttempts(40_000), 3)
      assert.deepEqual(await store.webhookAttempts('wh_1', { limit: 10 }), [later])
      assert.deepEqual(await store.webhookAttempts('wh_2', { limit: 10 }), [])
    },
  )

  withStore(
    'deleteWebhook() removes the subscription and its attempts, and answers false for an unknown id',
    async (store) => {
      await store.insertWebhook(webhook('wh_1', 'key_a', 1_000))
      await store.insertWebhook(webhook('wh_2', 'key_a', 1_001))
      await store.insertWebhookAttempt(attempt('wh_1', 'msg_1', 1, 5_000))
      await store.insertWebhookAttempt(attempt('wh_1', 'msg_1', 2, 6_000))
      await store.insertWebhookAttempt(attempt('wh_2', 'msg_1', 1, 5_000))
      assert.equal(await store.deleteWebhook('wh_1'), true)
      assert.equal(await store.webhook('wh_1'), undefined)
      assert.deepEqual(ids(await store.webhooksOf('key_a')), ['wh_2'])
      assert.equal(await store.webhookCount('key_a'), 1)
      assert.deepEqual(await store.webhookAttempts('wh_1', { limit: 10 }), [])
      assert.equal(await store.pruneWebhookAttempts(Number.MAX_SAFE_INTEGER), 1, "only wh_2's attempt was left")
      assert.equal(await store.deleteWebhook('wh_1'), false)
      assert.equal(await store.deleteWebhook('wh_nope'), false)
      // The id is free again.
      await store.insertWebhook(webhook('wh_1', 'key_b', 2_000))
      assert.equal((await store.webhook('wh_1'))?.ownerKeyId, 'key_b')
    },
  )

  withStore(
    'the delivery lease: one holder at a time until it expires; the holder renews; release frees it',
    async (store) => {
      assert.equal(await store.claimWebhookLease('A', 1_000, 11_000), true, 'A takes the free lease')
      assert.equal(await store.claimWebhookLease('B', 1_500, 11_500), false, "B is refused while A's is valid")
      assert.equal(await store.claimWebhookLease('B', 10_999, 20_999), false, 'still valid 1 ms before it ends')
      assert.equal(await store.claimWebhookLease('A', 5_000, 15_000), true, 'A renews its own')
      assert.equal(await store.claimWebhookLease('B', 11_000, 21_000), false, 'the renewal moved the end')
      assert.equal(await store.claimWebhookLease('B', 15_000, 25_000), true, 'B takes it once expired')
      assert.equal(await store.claimWebhookLease('A', 16_000, 26_000), false, 'A lost it')
      await store.releaseWebhookLease('A')
      assert.equal(await store.claimWebhookLease('A', 16_001, 26_001), false, "A's release does not free B's lease")
      await store.releaseWebhookLease('B')
      assert.equal(await store.claimWebhookLease('A', 16_002, 26_002), true, "B's release frees it at once")
      const racers = await Promise.all(['C', 'D', 'E'].map((h) => store.claimWebhookLease(h, 30_000, 40_000)))
      assert.deepEqual(racers.filter(Boolean).length, 1, 'of racers for an expired lease, exactly one takes it')
    },
  )

  test(
    `${name}: subscriptions, attempts and the lease survive closing and reopening the store`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const first = await backing.open()
      const record = full('wh_1', 'key_a', 1_000)
      await first.insertWebhook(record)
      await first.insertWebhookAttempt(attempt('wh_1', 'msg_1', 1, 5_000))
      assert.equal(await first.claimWebhookLease('A', 1_000, 60_000), true)
      await first.close()
      const reopened = await backing.open()
      t.after(() => reopened.close())
      assert.deepEqual(await reopened.webhook('wh_1'), record)
      assert.deepEqual(await reopened.webhookAttempts('wh_1', { limit: 5 }), [attempt('wh_1', 'msg_1', 1, 5_000)])
      assert.equal(await reopened.claimWebhookLease('B', 2_000, 62_000), false, "A's lease is still held")
    },
  )

  test(
    `${name}: a store opened read-only reads webhook records, and ${readOnlyWrites === 'written' ? 'writes them (API replicas)' : 'cannot write them'}`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const writer = await backing.open()
      t.after(() => writer.close())
      await writer.applyBlock(emptyBlock(1), 0)
      await writer.insertWebhook(webhook('wh_1', 'key_a', 1_000))
      const reader = await backing.openReadOnly()
      t.after(() => reader.close())
      assert.deepEqual(await reader.webhook('wh_1'), webhook('wh_1', 'key_a', 1_000))
      assert.equal(await reader.webhookCount('key_a'), 1)
      assert.deepEqual(ids(await reader.activeWebhooks()), ['wh_1'])
      await assert.rejects(reader.applyBlock(emptyBlock(2), 0), refusedWith('store_read_only_error'))
      if (readOnlyWrites === 'refused') {
        // The driver's own refusal (the API maps it), not the read-only wrapper's.
        const driverRefusal = /readonly/
        await assert.rejects(reader.insertWebhook(webhook('wh_2', 'key_a', 2_000)), driverRefusal)
        await assert.rejects(reader.updateWebhook('wh_1', { paused: true }, 2_000), driverRefusal)
        await assert.rejects(reader.claimWebhookLease('A', 1_000, 2_000), driverRefusal)
        assert.deepEqual(await writer.webhooksOf('key_a'), [webhook('wh_1', 'key_a', 1_000)])
        return
      }
      await reader.insertWebhook(webhook('wh_2', 'key_a', 2_000))
      assert.equal((await reader.updateWebhook('wh_1', { cursor: 'c:1' }, 3_000, ''))?.cursor, 'c:1')
      await reader.insertWebhookAttempt(attempt('wh_1', 'msg_1', 1, 3_000))
      assert.equal(await reader.claimWebhookLease('api-1', 3_000, 13_000), true)
      assert.equal(await writer.claimWebhookLease('indexer', 4_000, 14_000), false)
      await assert.rejects(
        reader.insertWebhook(webhook('wh_2', 'key_a', 2_000)),
        refusedWith('store_webhook_exists_error'),
      )
      assert.deepEqual(ids(await writer.webhooksOf('key_a')), ['wh_1', 'wh_2'])
      assert.equal((await writer.webhook('wh_1'))?.cursor, 'c:1')
      assert.equal((await writer.webhookAttempts('wh_1', { limit: 5 })).length, 1)
      assert.equal(await reader.pruneWebhookAttempts(10_000), 1)
      await reader.releaseWebhookLease('api-1')
      assert.equal(await writer.claimWebhookLease('indexer', 4_000, 14_000), true)
      assert.equal(await reader.deleteWebhook('wh_2'), true)
      assert.deepEqual(ids(await writer.webhooksOf('key_a')), ['wh_1'])
      assert.equal((await writer.position())?.head.blockNum, 1, 'chain data is still refused')
    },
  )
}
