import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { AccountRecord, AuditEntry, KeyUsageRecord, SessionRecord, Store } from '../../../src/store/index.ts'
import { emptyBlock, hash, key, type KeysStoreFactory } from './keys-contract.ts'
import type { ReadOnlyWebhookWrites } from './webhooks-contract.ts'

const HOUR = 3_600_000

/** An enabled account whose login is its id without `acc_`. */
export const account = (id: string, createdAtMs: number, changes: Partial<AccountRecord> = {}): AccountRecord => ({
  id,
  login: id.replace(/^acc_/, ''),
  passwordHash: `$argon2id$v=19$m=65536,t=3,p=4$${id}`,
  createdAtMs,
  ...changes,
})

const session = (idHash: string, accountId: string, expiresAtMs: number): SessionRecord => ({
  idHash,
  accountId,
  csrfToken: `csrf_${idHash}`,
  createdAtMs: expiresAtMs - 1_000,
  expiresAtMs,
})

const usage = (keyId: string, hour: number, counts: Partial<KeyUsageRecord> = {}): KeyUsageRecord => ({
  keyId,
  hourMs: hour * HOUR,
  ok: 0,
  clientErrors: 0,
  authFailures: 0,
  rateLimited: 0,
  documents: 0,
  ...counts,
})

const refusedWith = (code: string) => (e: { code?: string }) => e.code === code
const seqs = (entries: readonly AuditEntry[]) => entries.map((e) => e.seq)
const actions = (entries: readonly AuditEntry[]) => entries.map((e) => e.action)

/**
 * The PortalStore port, run against one adapter. `readOnlyWrites` says what a store opened read-only does with portal
 * writes, as for webhook records: PostgreSQL writes them, SQLite's read-only connection refuses them.
 */
export function runPortalContract(
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

  withStore('an account reads back as stored by id and by login, oldest first in the list', async (store) => {
    assert.equal(await store.accountCount(), 0)
    assert.deepEqual(await store.accounts(), [])
    const later = account('acc_c', 30)
    const disabled = account('acc_b', 10, { disabledAtMs: 4_000_000_000_000 })
    const tieZ = account('acc_z', 20)
    const tieA = account('acc_a', 20)
    for (const r of [later, disabled, tieZ, tieA]) await store.insertAccount(r)
    assert.deepEqual(await store.accountById('acc_b'), disabled)
    assert.deepEqual(await store.accountByLogin('b'), disabled)
    assert.deepEqual(await store.accountById('acc_c'), later)
    assert.deepEqual(Object.keys((await store.accountByLogin('c'))!).sort(), [
      'createdAtMs',
      'id',
      'login',
      'passwordHash',
    ])
    assert.equal(await store.accountById('acc_nope'), undefined)
    assert.equal(await store.accountByLogin('nope'), undefined)
    assert.equal(await store.accountByLogin('B'), undefined, 'logins are stored lower case by the caller: exact match')
    assert.deepEqual(await store.accounts(), [disabled, tieA, tieZ, later])
    assert.equal(await store.accountCount(), 4)
  })

  withStore('a taken id or login is refused with store_account_exists_error and changes nothing', async (store) => {
    const first = account('acc_1', 1_000, { login: 'alice' })
    await store.insertAccount(first)
    await assert.rejects(
      store.insertAccount(account('acc_1', 2_000, { login: 'bob' })),
      refusedWith('store_account_exists_error'),
    )
    await assert.rejects(
      store.insertAccount(account('acc_2', 2_000, { login: 'alice' })),
      refusedWith('store_account_exists_error'),
    )
    assert.deepEqual(await store.accounts(), [first])
    assert.equal(await store.accountByLogin('bob'), undefined)
    assert.equal(await store.accountCount(), 1)
  })

  withStore('disabling an account ends its sessions (only its own); re-enabling keeps them ended', async (store) => {
    await store.insertAccount(account('acc_1', 1_000))
    await store.insertAccount(account('acc_2', 1_000))
    for (const s of [session('s1', 'acc_1', 9_000), session('s2', 'acc_1', 9_000), session('s3', 'acc_2', 9_000)])
      await store.insertSession(s)
    assert.equal(await store.setAccountDisabled('acc_1', 5_000), true)
    assert.equal((await store.accountById('acc_1'))?.disabledAtMs, 5_000)
    assert.equal(await store.session('s1', 6_000), undefined)
    assert.equal(await store.session('s2', 6_000), undefined)
    assert.deepEqual(await store.session('s3', 6_000), session('s3', 'acc_2', 9_000))
    assert.equal(await store.setAccountDisabled('acc_1', null), true)
    assert.deepEqual(await store.accountById('acc_1'), account('acc_1', 1_000))
    assert.equal(await store.session('s1', 6_000), undefined)
    await store.insertSession(session('s4', 'acc_1', 9_000))
    assert.equal(await store.setAccountDisabled('acc_nope', 5_000), false)
    assert.equal((await store.session('s4', 6_000))?.accountId, 'acc_1', 'an unknown id ends nothing')
    assert.equal(await store.setAccountPassword('acc_2', 'new-hash'), true)
    assert.equal((await store.accountById('acc_2'))?.passwordHash, 'new-hash')
    assert.equal(await store.setAccountPassword('acc_nope', 'x'), false)
  })

  withStore('a session is found until it expires; deleted and pruned ones are gone', async (store) => {
    await store.insertAccount(account('acc_1', 1_000))
    const s1 = session('s1', 'acc_1', 10_000)
    await store.insertSession(s1)
    await store.insertSession(session('s2', 'acc_1', 20_000))
    await store.insertSession(session('s3', 'acc_1', 30_000))
    assert.deepEqual(await store.session('s1', 9_999), s1)
    assert.equal(await store.session('s1', 10_000), undefined, 'expired at its expiry time')
    assert.equal(await store.session('nope', 0), undefined)
    await store.deleteSession('s3')
    await store.deleteSession('nope')
    assert.equal(await store.session('s3', 0), undefined)
    assert.equal(await store.pruneSessions(20_000), 2)
    assert.equal(await store.session('s1', 0), undefined, 'pruned')
    assert.equal(await store.pruneSessions(20_000), 0)
  })

  withStore('the audit log reads newest first, per account or whole, in pages below a seq', async (store) => {
    const entry = (atMs: number, action: string, changes: Partial<AuditEntry> = {}): AuditEntry => ({
      atMs,
      action,
      ip: '192.0.2.1',
      detail: '{}',
      ...changes,
    })
    await store.appendAudit(entry(1, 'setup', { accountId: 'acc_1' }))
    await store.appendAudit(entry(2, 'login_failed'))
    await store.appendAudit(entry(3, 'key_create', { accountId: 'acc_1', keyId: 'k1', detail: '{"name":"dapp"}' }))
    await store.appendAudit(entry(3, 'login', { accountId: 'acc_2' }))
    await store.appendAudit(entry(4, 'key_revoke', { accountId: 'acc_1', keyId: 'k1', seq: 1 }))
    const all = await store.auditEntries({ limit: 10 })
    assert.deepEqual(actions(all), ['key_revoke', 'login', 'key_create', 'login_failed', 'setup'])
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].seq! > all[i].seq!, 'seq increases with each append')
    assert.deepEqual(all[2], {
      ...entry(3, 'key_create', { accountId: 'acc_1', keyId: 'k1', detail: '{"name":"dapp"}' }),
      seq: all[2].seq,
    })
    assert.deepEqual(all[3], { ...entry(2, 'login_failed'), seq: all[3].seq }, 'absent fields stay absent')
    assert.notEqual(all[0].seq, 1, 'the store numbers entries, whatever seq was appended')

    const mine = await store.auditEntries({ accountId: 'acc_1', limit: 2 })
    assert.deepEqual(actions(mine), ['key_revoke', 'key_create'])
    const next = await store.auditEntries({ accountId: 'acc_1', limit: 2, beforeSeq: mine[1].seq })
    assert.deepEqual(actions(next), ['setup'])
    assert.deepEqual(await store.auditEntries({ accountId: 'acc_1', limit: 2, beforeSeq: next[0].seq }), [])
    assert.deepEqual(seqs(await store.auditEntries({ limit: 2, beforeSeq: all[1].seq })), seqs(all.slice(2, 4)))
    assert.deepEqual(await store.auditEntries({ accountId: 'acc_nobody', limit: 5 }), [])
  })

  withStore(
    'key usage is added to, per key and hour (never replaced), and read for many keys at once',
    async (store) => {
      await store.addKeyUsage([])
      await store.addKeyUsage([
        usage('k2', 10, { ok: 5, documents: 50 }),
        usage('k1', 11, { ok: 1, clientErrors: 2, authFailures: 3, rateLimited: 4, documents: 5 }),
        usage('k1', 10, { ok: 2 }),
        usage('k1', 11, { ok: 10, rateLimited: 1 }),
      ])
      await store.addKeyUsage([usage('k1', 11, { ok: 100, documents: 1_000 }), usage('k3', 12, { ok: 1 })])
      assert.deepEqual(await store.keyUsage(['k1', 'k2', 'k3', 'k_none'], 0), [
        usage('k1', 10, { ok: 2 }),
        usage('k1', 11, { ok: 111, clientErrors: 2, authFailures: 3, rateLimited: 5, documents: 1_005 }),
        usage('k2', 10, { ok: 5, documents: 50 }),
        usage('k3', 12, { ok: 1 }),
      ])
      assert.deepEqual(await store.keyUsage(['k3', 'k1'], 11 * HOUR), [
        usage('k1', 11, { ok: 111, clientErrors: 2, authFailures: 3, rateLimited: 5, documents: 1_005 }),
        usage('k3', 12, { ok: 1 }),
      ])
      assert.deepEqual(await store.keyUsage(['k2'], 11 * HOUR), [])
      assert.deepEqual(await store.keyUsage([], 0), [])
    },
  )

  test(`${name}: concurrent usage batches of two stores on one backing all add up`, { skip }, async (t) => {
    const backing = await factory(t)
    const a = await backing.open()
    t.after(() => a.close())
    const b = await backing.open()
    t.after(() => b.close())
    const batch = (keys: string[]) => keys.map((k) => usage(k, 1, { ok: 1, documents: 2 }))
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a : b).addKeyUsage(batch(i % 3 ? ['k1', 'k2', 'k3'] : ['k3', 'k2', 'k1'])),
      ),
    )
    assert.deepEqual(await a.keyUsage(['k1', 'k2', 'k3'], 0), [
      usage('k1', 1, { ok: 10, documents: 20 }),
      usage('k2', 1, { ok: 10, documents: 20 }),
      usage('k3', 1, { ok: 10, documents: 20 }),
    ])
  })

  withStore('a setup token is spent once; a new one replaces the kept one', async (store) => {
    assert.equal(await store.hasSetupToken(), false)
    assert.equal(await store.useSetupToken('t1', 1_000), false, 'no token kept')
    await store.putSetupToken('t1', 1_000)
    assert.equal(await store.hasSetupToken(), true)
    await store.putSetupToken('t2', 2_000)
    assert.equal(await store.useSetupToken('t1', 3_000), false, 'replaced by t2')
    assert.equal(await store.hasSetupToken(), true)
    assert.equal(await store.useSetupToken('t2', 3_000), true)
    assert.equal(await store.hasSetupToken(), false)
    assert.equal(await store.useSetupToken('t2', 4_000), false, 'spent')
    await store.putSetupToken('t3', 5_000)
    assert.equal(await store.hasSetupToken(), true)
    assert.equal(await store.useSetupToken('t2', 6_000), false)
    assert.equal(await store.useSetupToken('t3', 6_000), true)
  })

  test(
    `${name}: of concurrent spends of one setup token, from two stores on one backing, exactly one wins`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const a = await backing.open()
      t.after(() => a.close())
      const b = await backing.open()
      t.after(() => b.close())
      for (const round of [1, 2, 3]) {
        await a.putSetupToken(`t${round}`, round)
        const won = await Promise.all(
          Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).useSetupToken(`t${round}`, round * 10 + i)),
        )
        assert.equal(won.filter(Boolean).length, 1, `round ${round}: ${JSON.stringify(won)}`)
        assert.equal(await b.hasSetupToken(), false)
      }
    },
  )

  test(
    `${name}: a store opened read-only reads portal records, and ${readOnlyWrites === 'written' ? 'writes them (API replicas)' : 'cannot write them'}`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const writer = await backing.open()
      t.after(() => writer.close())
      await writer.applyBlock(emptyBlock(1), 0)
      await writer.insertAccount(account('acc_1', 1_000))
      await writer.insertSession(session('s1', 'acc_1', 9_000))
      await writer.appendAudit({ atMs: 1_000, accountId: 'acc_1', action: 'setup', ip: '::1', detail: '{}' })
      await writer.addKeyUsage([usage('k1', 1, { ok: 1 })])
      await writer.putSetupToken('t1', 1_000)
      await writer.insertApiKey({ record: key('k1', 1_000, { accountId: 'acc_1' }), keyHash: hash('server_k1') })
      const reader = await backing.openReadOnly()
      t.after(() => reader.close())
      assert.deepEqual(await reader.accountByLogin('1'), account('acc_1', 1_000))
      assert.equal(await reader.accountCount(), 1)
      assert.deepEqual(await reader.session('s1', 2_000), session('s1', 'acc_1', 9_000))
      assert.deepEqual(actions(await reader.auditEntries({ accountId: 'acc_1', limit: 5 })), ['setup'])
      assert.deepEqual(await reader.keyUsage(['k1'], 0), [usage('k1', 1, { ok: 1 })])
      assert.equal(await reader.hasSetupToken(), true)
      assert.deepEqual(
        (await reader.apiKeysOf('acc_1')).map((k) => k.id),
        ['k1'],
      )
      if (readOnlyWrites === 'refused') {
        // The driver's own refusal, not the read-only wrapper's.
        const driverRefusal = /readonly/
        await assert.rejects(reader.insertAccount(account('acc_2', 2_000)), driverRefusal)
        await assert.rejects(reader.insertSession(session('s2', 'acc_1', 9_000)), driverRefusal)
        await assert.rejects(reader.addKeyUsage([usage('k1', 1, { ok: 1 })]), driverRefusal)
        await assert.rejects(reader.useSetupToken('t1', 2_000), driverRefusal)
        await assert.rejects(reader.touchApiKeys([{ id: 'k1', atMs: 2_000 }]), driverRefusal)
        assert.equal(await writer.accountCount(), 1)
        assert.equal(await writer.hasSetupToken(), true)
        return
      }
      await reader.insertAccount(account('acc_2', 2_000))
      await assert.rejects(reader.insertAccount(account('acc_2', 2_000)), refusedWith('store_account_exists_error'))
      await reader.insertSession(session('s2', 'acc_2', 9_000))
      await reader.appendAudit({ atMs: 2_000, accountId: 'acc_2', action: 'login', ip: '::1', detail: '{}' })
      await reader.addKeyUsage([usage('k1', 1, { ok: 2 })])
      assert.equal(await reader.useSetupToken('t1', 2_000), true)
      assert.equal(await reader.setAccountDisabled('acc_1', 3_000), true)
      assert.equal(await reader.setAccountPassword('acc_2', 'h2'), true)
      await reader.deleteSession('s2')
      await reader.insertSession(session('s3', 'acc_2', 4_000))
      assert.equal(await reader.pruneSessions(5_000), 1)
      await reader.putSetupToken('t2', 6_000)
      await reader.touchApiKeys([{ id: 'k1', atMs: 7_000 }])
      assert.equal((await reader.updateApiKey('k1', { name: 'renamed' }))?.name, 'renamed')

      assert.equal(await writer.accountCount(), 2)
      assert.equal((await writer.accountById('acc_1'))?.disabledAtMs, 3_000)
      assert.equal(await writer.session('s1', 2_000), undefined, 'disabling ended the session')
      assert.equal((await writer.accountById('acc_2'))?.passwordHash, 'h2')
      assert.deepEqual(actions(await writer.auditEntries({ limit: 5 })), ['login', 'setup'])
      assert.deepEqual(await writer.keyUsage(['k1'], 0), [usage('k1', 1, { ok: 3 })])
      assert.equal(await writer.useSetupToken('t2', 8_000), true)
      assert.deepEqual(
        await writer.apiKeyById('k1'),
        key('k1', 1_000, { accountId: 'acc_1', name: 'renamed', lastUsedAtMs: 7_000 }),
      )
      await assert.rejects(reader.applyBlock(emptyBlock(2), 0), refusedWith('store_read_only_error'))
      assert.equal((await writer.position())?.head.blockNum, 1, 'chain data is still refused')
    },
  )
}
