import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { keyAccountsAt } from '../../src/hyperion/state-permissions.ts'
import { chainAccount, storeAccount } from '../../src/hyperion/state-account.ts'
import type { AccountPermission } from '../../src/store/types.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

const K1 = 'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63'
const K2 = 'PUB_K1_5bbkxaLdB5bfVZW6DJY8M74vwT2m61PqwywNUa5azfkJTvYa5H'

const permission = (name: string, keys: [string, number][], threshold = 1): AccountPermission => ({
  name,
  parent: name === 'owner' ? '' : 'owner',
  threshold,
  keys: keys.map(([key, weight]) => ({ key, weight })),
  accounts: [{ permission: { actor: 'bob', permission: 'active' }, weight: 1 }],
  blockNum: 3,
})

const PERMISSIONS: Record<string, AccountPermission[]> = {
  alice: [permission('active', [[K1, 2]], 3), permission('owner', [[K2, 1]])],
  carol: [permission('owner', [[K1, 1]])],
}

const reader = {
  async keyAccounts({ publicKey }: { publicKey: string }) {
    const found: { account: string; permission: string }[] = []
    for (const [account, list] of Object.entries(PERMISSIONS))
      for (const p of list) if (p.keys.some((k) => k.key === publicKey)) found.push({ account, permission: p.name })
    return found
  },
  async permissions({ account }: { account: string }) {
    return PERMISSIONS[account] ?? []
  },
}

test("keyAccountsAt lists each account once and each permission with the key's weight and the threshold", async () => {
  assert.deepEqual(await keyAccountsAt(reader, { publicKey: K1, blockNum: 9 }), {
    accounts: ['alice', 'carol'],
    permissions: [
      { owner: 'alice', name: 'active', weight: 2, threshold: 3 },
      { owner: 'carol', name: 'owner', weight: 1, threshold: 1 },
    ],
  })
  assert.deepEqual(await keyAccountsAt(reader, { publicKey: 'PUB_K1_none', blockNum: 9 }), {
    accounts: [],
    permissions: [],
  })
})

test("storeAccount answers nodeos's permissions shape from the store, undefined for an account without any", async () => {
  assert.deepEqual(await storeAccount(reader, { account: 'carol', blockNum: 9 }), {
    account_name: 'carol',
    head_block_num: 9,
    permissions: [
      {
        perm_name: 'owner',
        parent: '',
        required_auth: {
          threshold: 1,
          keys: [{ key: K1, weight: 1 }],
          accounts: [{ permission: { actor: 'bob', permission: 'active' }, weight: 1 }],
          waits: [],
        },
      },
    ],
  })
  assert.equal(await storeAccount(reader, { account: 'nobody', blockNum: 9 }), undefined)
})

test("chainAccount: nodeos's account, its error as not found, and undefined when the node cannot answer", async (t) => {
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      const name = (JSON.parse(body) as { account_name: string }).account_name
      if (name === 'slow') return // never answers: the timeout ends the call
      if (name === 'junk') {
        response.writeHead(502).end('<html>')
        return
      }
      const known = name === 'alice'
      response.writeHead(known ? 200 : 500, { 'content-type': 'application/json' })
      response.end(JSON.stringify(known ? { account_name: 'alice' } : { code: 500, error: { name: 'unknown_key' } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onCleanup(t, () => new Promise<void>((resolve) => server.close(() => resolve())))
  onCleanup(t, () => server.closeAllConnections())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  assert.deepEqual(await chainAccount(url, 2_000, 'alice'), { found: true, account: { account_name: 'alice' } })
  assert.deepEqual(await chainAccount(url, 2_000, 'nobody'), { found: false })
  assert.equal(await chainAccount(url, 2_000, 'junk'), undefined)
  assert.equal(await chainAccount(url, 200, 'slow'), undefined)
  assert.equal(await chainAccount('http://127.0.0.1:1', 2_000, 'alice'), undefined)
})
