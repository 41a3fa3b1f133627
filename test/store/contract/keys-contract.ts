import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { SECRET_NAMES, type ApiKeyRecord, type BlockBatch, type Store } from '../../../src/store/index.ts'

/** A store backing that can be opened more than once, as a writer or read-only; never opened before the test does. */
export type KeysStoreFactory = (
  t: TestContext,
) => Promise<{ open: () => Promise<Store>; openReadOnly: () => Promise<Store> }>

/** The SHA-256 hex of a key string, as the auth layer stores it. */
export const hash = (keyString: string) => createHash('sha256').update(keyString).digest('hex')

/** A server key (unless `changes` say otherwise) named after its id. */
export const key = (id: string, createdAtMs: number, changes: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  name: `key ${id}`,
  type: 'server',
  origins: [],
  createdAtMs,
  ...changes,
})

/** Inserts `record` under the hash of the key string `<type>_<id>`. */
const insert = (store: Store, record: ApiKeyRecord) =>
  store.insertApiKey({ record, keyHash: hash(`${record.type}_${record.id}`) })

const refusedWith = (code: string) => (e: { code?: string }) => e.code === code

/** A time after every revocation of these tests but the future ones. */
const NOW = 1_000_000

/** An empty block `num` of one branch, linking to `num - 1`. */
export function emptyBlock(num: number): BlockBatch {
  const id = (n: number) => n.toString(16).padStart(8, '0') + 'a'.repeat(56)
  return {
    block: {
      num,
      id: id(num),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1),
      timestampMs: 1_000_000 + num * 500,
      producer: 'producera',
      transactionCount: 0,
      actionCount: 0,
    },
    transactions: [],
    actions: [],
    rows: [],
    abis: [],
    permissions: [],
    links: [],
  }
}

/** The KeyStore port and read-only opens, run against one adapter. */
/**
 * What a read-only open does with a key's creation and revocation: `written` where the portal on an API replica must
 * manage keys (PostgreSQL: through the writes pool), `refused` where the connection cannot write (SQLite).
 */
export type ReadOnlyKeyWrites = 'written' | 'refused'

export function runKeysContract(
  name: string,
  factory: KeysStoreFactory,
  readOnlyKeyWrites: ReadOnlyKeyWrites,
  skip: string | false = false,
): void {
  test(
    `${name}: an API key is found by the hash of its string and by its id, as it was stored`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const web = key('w1', 1_000, {
        type: 'web',
        name: 'dapp',
        origins: ['https://a.example', 'http://localhost:3000'],
      })
      await insert(store, web)
      await insert(store, key('s1', 2_000))
      assert.deepEqual(await store.apiKeyByHash(hash('web_w1')), web)
      assert.deepEqual(await store.apiKeyById('w1'), web)
      assert.deepEqual((await store.apiKeyById('s1'))?.origins, [])
      assert.equal(await store.apiKeyByHash(hash('web_nope')), undefined)
      assert.equal(await store.apiKeyById('nope'), undefined)
    },
  )

  test(
    `${name}: a taken id or key hash is refused with store_api_key_exists_error and changes nothing`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const first = key('k1', 1_000)
      await insert(store, first)
      await assert.rejects(
        store.insertApiKey({ record: key('k1', 2_000, { name: 'other' }), keyHash: hash('another string') }),
        refusedWith('store_api_key_exists_error'),
      )
      await assert.rejects(
        store.insertApiKey({ record: key('k2', 2_000), keyHash: hash('server_k1') }),
        refusedWith('store_api_key_exists_error'),
      )
      assert.deepEqual(await store.apiKeys(), [first])
      assert.equal(await store.apiKeyByHash(hash('another string')), undefined)
    },
  )

  test(`${name}: apiKeys() lists every key oldest first, ties by id`, { skip }, async (t) => {
    const store = await (await factory(t)).open()
    t.after(() => store.close())
    assert.deepEqual(await store.apiKeys(), [])
    for (const [id, at] of [
      ['c', 30],
      ['b', 10],
      ['z', 20],
      ['a', 20],
    ] as const)
      await insert(store, key(id, at))
    assert.deepEqual(
      (await store.apiKeys()).map((k) => k.id),
      ['b', 'a', 'z', 'c'],
    )
  })

  test(
    `${name}: revokeApiKey() marks a key revoked once (a second, later revoke keeps the first time), false for an unknown id`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      for (const id of ['k1', 'k2', 'k3']) await insert(store, key(id, 1_000))
      assert.deepEqual(await store.revokedApiKeyIds(NOW), [])
      assert.equal(await store.revokeApiKey({ id: 'k2', atMs: 5_000 }), true)
      assert.equal(await store.revokeApiKey({ id: 'k2', atMs: 9_000 }), true)
      assert.equal(await store.revokeApiKey({ id: 'nope', atMs: 5_000 }), false)
      assert.deepEqual(await store.apiKeyByHash(hash('server_k2')), { ...key('k2', 1_000), revokedAtMs: 5_000 })
      assert.equal((await store.apiKeyById('k1'))?.revokedAtMs, undefined)
      await store.revokeApiKey({ id: 'k1', atMs: 6_000 })
      assert.deepEqual((await store.revokedApiKeyIds(NOW)).sort(), ['k1', 'k2'])
      assert.deepEqual(
        (await store.apiKeys()).map((k) => k.revokedAtMs),
        [6_000, 5_000, undefined],
      )
    },
  )

  test(
    `${name}: secrets are 32 bytes, one per name, the same for two stores opened at once and after a reopen`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      // Two first opens at once: both must settle on the same secrets.
      const [a, b] = await Promise.all([backing.open(), backing.open()])
      const secrets = async (store: Store) => Promise.all(SECRET_NAMES.map((n) => store.secret(n)))
      const first = await secrets(a)
      assert.equal(first.length, 2)
      for (const s of first) assert.equal(s.byteLength, 32)
      assert.notDeepEqual(first[0], first[1])
      assert.deepEqual(await secrets(b), first)
      await a.close()
      await b.close()
      const reopened = await backing.open()
      assert.deepEqual(await secrets(reopened), first)
      await reopened.close()
    },
  )

  test(
    `${name}: keys written through one open store are seen by another open on the same backing`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const writer = await backing.open()
      const other = await backing.open()
      await insert(writer, key('k1', 1_000))
      assert.deepEqual(await other.apiKeyByHash(hash('server_k1')), key('k1', 1_000))
      await other.revokeApiKey({ id: 'k1', atMs: 2_000 })
      assert.deepEqual(await writer.revokedApiKeyIds(NOW), ['k1'])
      await writer.close()
      await other.close()
    },
  )

  test(
    `${name}: a read-only open refuses a store no writer created, reads what writers store, and refuses every chain write untouched`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      await assert.rejects(backing.openReadOnly(), refusedWith('store_not_found_error'))
      const writer = await backing.open()
      await writer.applyBlock(emptyBlock(1), 0)
      await insert(writer, key('k1', 1_000, { type: 'web', origins: ['https://a.example'] }))
      const reader = await backing.openReadOnly()
      assert.deepEqual((await reader.position())?.head.blockNum, 1)
      assert.equal((await reader.blockByNum(1))?.num, 1)
      assert.deepEqual(await reader.apiKeyByHash(hash('web_k1')), await writer.apiKeyById('k1'))
      for (const n of SECRET_NAMES) assert.deepEqual(await reader.secret(n), await writer.secret(n))

      await assert.rejects(reader.applyBlock(emptyBlock(2), 0), refusedWith('store_read_only_error'))
      await assert.rejects(reader.applyBlocks([emptyBlock(2)], 0), refusedWith('store_read_only_error'))
      await assert.rejects(reader.undoFrom(1), refusedWith('store_read_only_error'))
      assert.equal((await writer.position())?.head.blockNum, 1)
      // Keys: the portal on an API replica creates and revokes them where the store lets a reader write them.
      if (readOnlyKeyWrites === 'written') {
        await insert(reader, key('k0', 500))
        assert.equal(await reader.revokeApiKey({ id: 'k0', atMs: 600 }), true)
        assert.equal((await writer.apiKeyById('k0'))?.revokedAtMs, 600)
      } else {
        await assert.rejects(insert(reader, key('k0', 500)))
        await assert.rejects(reader.revokeApiKey({ id: 'k1', atMs: 2_000 }))
        assert.deepEqual(
          (await writer.apiKeys()).map((k) => [k.id, k.revokedAtMs]),
          [['k1', undefined]],
        )
      }

      // What a writer stores later (`antler keys` while the API runs) is seen by the open reader.
      await insert(writer, key('k2', 2_000))
      await writer.revokeApiKey({ id: 'k1', atMs: 3_000 })
      assert.equal((await reader.apiKeyByHash(hash('server_k2')))?.id, 'k2')
      assert.deepEqual(await reader.revokedApiKeyIds(NOW), readOnlyKeyWrites === 'written' ? ['k0', 'k1'] : ['k1'])
      assert.deepEqual(
        (await reader.apiKeys()).map((k) => k.id),
        readOnlyKeyWrites === 'written' ? ['k0', 'k1', 'k2'] : ['k1', 'k2'],
      )
      await reader.close()
      await writer.close()
    },
  )

  test(
    `${name}: a key's portal fields read back as stored through every read, present or absent (never undefined-valued)`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const portal = key('p1', 1_000, {
        type: 'web',
        origins: ['https://a.example'],
        accountId: 'acc_1',
        prefix: 'web_abcd',
        lastUsedAtMs: 1_500,
        limits: { callsPerMinute: 7, tokensPerHour: 3 },
        revokedAtMs: 9_000_000_000_000,
      })
      const partial = key('p2', 2_000, { accountId: 'acc_1', limits: { callsPerMinute: 2 } })
      const cli = key('c1', 3_000)
      for (const r of [portal, partial, cli]) await insert(store, r)
      assert.deepEqual(await store.apiKeyById('p1'), portal)
      assert.deepEqual(await store.apiKeyByHash(hash('web_p1')), portal)
      assert.deepEqual(await store.apiKeyById('p2'), partial)
      assert.deepEqual(await store.apiKeys(), [portal, partial, cli])
      assert.deepEqual(Object.keys((await store.apiKeyById('c1'))!).sort(), [
        'createdAtMs',
        'id',
        'name',
        'origins',
        'type',
      ])
      assert.deepEqual(Object.keys((await store.apiKeyById('p2'))!.limits!), ['callsPerMinute'])
    },
  )

  test(
    `${name}: apiKeysOf() lists one account's keys oldest first, ties by id, revoked ones too`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      for (const [id, at, accountId] of [
        ['c', 30, 'acc_1'],
        ['b', 10, 'acc_1'],
        ['z', 20, 'acc_1'],
        ['a', 20, 'acc_1'],
        ['o', 5, 'acc_2'],
      ] as const)
        await insert(store, key(id, at, { accountId }))
      await insert(store, key('cli', 1))
      await store.revokeApiKey({ id: 'z', atMs: 100 })
      assert.deepEqual(
        (await store.apiKeysOf('acc_1')).map((k) => k.id),
        ['b', 'a', 'z', 'c'],
      )
      assert.equal((await store.apiKeysOf('acc_1'))[2].revokedAtMs, 100)
      assert.deepEqual(await store.apiKeysOf('acc_2'), [key('o', 5, { accountId: 'acc_2' })])
      assert.deepEqual(await store.apiKeysOf('acc_nobody'), [])
    },
  )

  test(
    `${name}: updateApiKey() changes the name, origins or limits (null clears them) and answers the new record`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const original = key('k1', 1_000, { type: 'web', origins: ['https://a.example'], accountId: 'acc_1' })
      await insert(store, original)
      await insert(store, key('k2', 2_000))
      const renamed = { ...original, name: 'renamed' }
      assert.deepEqual(await store.updateApiKey('k1', { name: 'renamed' }), renamed)
      const limited = { ...renamed, origins: [], limits: { tokensPerHour: 10 } }
      assert.deepEqual(await store.updateApiKey('k1', { origins: [], limits: { tokensPerHour: 10 } }), limited)
      assert.deepEqual(await store.apiKeyById('k1'), limited)
      assert.deepEqual(await store.updateApiKey('k1', {}), limited, 'an empty patch answers the record unchanged')
      assert.deepEqual(await store.updateApiKey('k1', { limits: null }), { ...renamed, origins: [] })
      assert.equal('limits' in (await store.apiKeyById('k1'))!, false)
      assert.equal(await store.updateApiKey('nope', { name: 'x' }), undefined)
      assert.equal(await store.updateApiKey('nope', {}), undefined)
      assert.deepEqual(await store.apiKeyById('k2'), key('k2', 2_000), 'another key is untouched')
    },
  )

  test(
    `${name}: touchApiKeys() sets the last use of a batch of keys, keeping the later time, and ignores unknown ids`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      for (const id of ['k1', 'k2', 'k3']) await insert(store, key(id, 1_000))
      await store.touchApiKeys([])
      await store.touchApiKeys([
        { id: 'k1', atMs: 5_000 },
        { id: 'k2', atMs: 6_000 },
        { id: 'k1', atMs: 7_000 },
        { id: 'k1', atMs: 4_000 },
        { id: 'nope', atMs: 5_000 },
      ])
      const lastUsed = async () => (await store.apiKeys()).map((k) => [k.id, k.lastUsedAtMs])
      assert.deepEqual(await lastUsed(), [
        ['k1', 7_000],
        ['k2', 6_000],
        ['k3', undefined],
      ])
      await store.touchApiKeys([
        { id: 'k2', atMs: 5_000 },
        { id: 'k1', atMs: 8_000 },
      ])
      assert.deepEqual(await lastUsed(), [
        ['k1', 8_000],
        ['k2', 6_000],
        ['k3', undefined],
      ])
      assert.equal('lastUsedAtMs' in (await store.apiKeyById('k3'))!, false)
    },
  )

  test(
    `${name}: a key revoked in the future (a rotation's grace) is revoked from that time on; the earlier of two revokes wins`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      for (const id of ['k1', 'k2']) await insert(store, key(id, 1_000))
      assert.equal(await store.revokeApiKey({ id: 'k1', atMs: 10_000 }), true)
      await store.revokeApiKey({ id: 'k2', atMs: 2_000 })
      assert.deepEqual(await store.revokedApiKeyIds(9_999), ['k2'], 'not revoked before its time')
      assert.deepEqual(await store.revokedApiKeyIds(10_000), ['k1', 'k2'], 'revoked at its time')
      assert.deepEqual(await store.revokedApiKeyIds(1_999), [])
      // Revoking "now" during the grace shortens it; a later revoke does not lengthen it.
      assert.equal(await store.revokeApiKey({ id: 'k1', atMs: 7_000 }), true)
      assert.equal((await store.apiKeyById('k1'))?.revokedAtMs, 7_000)
      assert.deepEqual(await store.revokedApiKeyIds(7_000), ['k1', 'k2'])
      assert.equal(await store.revokeApiKey({ id: 'k1', atMs: 20_000 }), true)
      assert.equal((await store.apiKeyById('k1'))?.revokedAtMs, 7_000)
      assert.deepEqual(await store.revokedApiKeyIds(6_999), ['k2'])
    },
  )
}
