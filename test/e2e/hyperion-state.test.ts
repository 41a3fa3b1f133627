import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { APIClient, PublicKey } from '@wharfkit/antelope'
import { send } from '../_helpers/http.ts'
import { seedHyperion } from '../_helpers/hyperion.ts'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { devKey, pushActions, waitIndexed, type ActionSpec } from '../_helpers/push.ts'

const transfer = (from: string, to: string, quantity: string): ActionSpec => ({
  account: 'eosio.token',
  name: 'transfer',
  actor: from,
  data: { from, to, quantity, memo: 'state' },
})

/** A 5-letter symbol code, unique per run. */
const freshSymbol = () =>
  Array.from({ length: 5 }, () => String.fromCharCode(65 + Math.floor(Math.random() * 26))).join('')

/** Seeds a fresh account on `antler dev` (with `extraArgs`); checks every state route against the chain and dfuse. */
async function checkStateRoutes(t: TestContext, extraArgs: string[]): Promise<void> {
  const p = await startPlatform(t, extraArgs)
  const chain = new APIClient({ url: p.chainApi })
  const token = await issueToken(p, p.apiKey)
  const rest = async <T>(path: string): Promise<T> => {
    const answer = await send(`${p.api}${path}`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(answer.status, 200, answer.text)
    return answer.body as T
  }
  const hyperion = async <T>(path: string, status = 200): Promise<T> => {
    const answer = await send(`${p.api}${path}`)
    assert.equal(answer.status, status, `${path}: ${answer.text}`)
    return answer.body as T
  }
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const answer = await send(`${p.api}${path}`, { method: 'POST', body: JSON.stringify(body) })
    assert.equal(answer.status, 200, `${path}: ${answer.text}`)
    return answer.body as T
  }
  const chainPost = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${p.chainApi}${path}`, { method: 'POST', body: JSON.stringify(body) })
    return (await response.json()) as T
  }

  // The shared seed: a fresh account holding 8.0000 EOS, an updateauth adding `hot` (a second key, and alice), a
  // linkauth of eosio.token::transfer to it; then a token of precision 0, 7 of which alice sends the account.
  const seed = await seedHyperion(p.chainApi, p.api)
  const { account, addedKey } = seed
  const linked = seed.trx.linkauth
  const symbol = freshSymbol()
  await pushActions(chain, [
    {
      account: 'eosio.token',
      name: 'create',
      actor: 'eosio.token',
      data: { issuer: 'alice', maximum_supply: `1000000 ${symbol}` },
    },
  ])
  const issued = await pushActions(chain, [
    {
      account: 'eosio.token',
      name: 'issue',
      actor: 'alice',
      data: { to: 'alice', quantity: `1000 ${symbol}`, memo: '' },
    },
    transfer('alice', account, `7 ${symbol}`),
  ])
  await waitIndexed(p.api, issued.blockNum)

  // get_tokens: every balance, with its precision, equal to the chain's and to dfuse's table read.
  type Tokens = { account: string; tokens: { symbol: string; precision: number; amount: number; contract: string }[] }
  const tokens = await hyperion<Tokens>(`/v2/state/get_tokens?account=${account}`)
  assert.equal(tokens.account, account)
  assert.deepEqual(tokens.tokens, [
    { symbol: 'EOS', precision: 4, amount: 8, contract: 'eosio.token' },
    { symbol, precision: 0, amount: 7, contract: 'eosio.token' },
  ])
  const chainBalances = await chainPost<string[]>('/v1/chain/get_currency_balance', { code: 'eosio.token', account })
  const tableBalances = (
    await rest<{ rows: { json: { balance: string } }[] }>(
      `/v0/state/table?account=eosio.token&table=accounts&scope=${account}&json=true`,
    )
  ).rows.map((r) => r.json.balance)
  const asAssets = (list: Tokens['tokens']) => list.map((x) => `${x.amount.toFixed(x.precision)} ${x.symbol}`).sort()
  assert.deepEqual(asAssets(tokens.tokens), [...chainBalances].sort())
  assert.deepEqual(asAssets(tokens.tokens), [...tableBalances].sort())
  assert.deepEqual((await hyperion<Tokens>(`/v2/state/get_tokens?account=${account}&skip=1`)).tokens, [
    tokens.tokens[1],
  ])
  assert.deepEqual((await hyperion<Tokens>(`/v2/state/get_tokens?account=nobody`)).tokens, [])

  // get_key_accounts: the added key in its legacy form finds the account; the answer's key is PUB_K1.
  const legacy = PublicKey.from(addedKey).toLegacyString()
  type KeyAccounts = {
    public_key: string
    account_names: string[]
    permissions?: { owner: string; name: string; weight: number; threshold: number }[]
  }
  const keyAccounts = await hyperion<KeyAccounts>(
    `/v2/state/get_key_accounts?public_key=${encodeURIComponent(legacy)}&details=true`,
  )
  assert.equal(keyAccounts.public_key, addedKey)
  assert.deepEqual(keyAccounts.account_names, [account])
  assert.deepEqual(keyAccounts.permissions, [{ owner: account, name: 'hot', weight: 1, threshold: 1 }])
  const chainAccount = await chainPost<{
    permissions: { perm_name: string; required_auth: { keys: { key: string }[] } }[]
  }>('/v1/chain/get_account', { account_name: account })
  const holding = chainAccount.permissions.filter((perm) =>
    perm.required_auth.keys.some((k) => String(PublicKey.from(k.key)) === addedKey),
  )
  assert.deepEqual(
    holding.map((perm) => perm.perm_name),
    keyAccounts.permissions?.map((perm) => perm.name),
  )
  assert.equal(
    (await hyperion<KeyAccounts>(`/v2/state/get_key_accounts?public_key=${encodeURIComponent(addedKey)}`)).permissions,
    undefined,
  )
  assert.deepEqual(
    (await post<{ account_names: string[] }>('/v2/state/get_key_accounts', { public_key: legacy })).account_names,
    [account],
  )
  assert.deepEqual(
    (await post<{ account_names: string[] }>('/v1/history/get_key_accounts', { public_key: addedKey })).account_names,
    [account],
  )
  const devAccounts = await hyperion<KeyAccounts>(
    `/v2/state/get_key_accounts?public_key=${encodeURIComponent(String(devKey.toPublic()))}&limit=2&skip=1`,
  )
  assert.equal(devAccounts.account_names.length, 2, 'a page of the many accounts of the devchain key')
  const badKey = await send(`${p.api}/v2/state/get_key_accounts?public_key=EOSnope`)
  assert.equal(badKey.status, 400)
  assert.deepEqual(badKey.body, { statusCode: 400, error: 'Bad Request', message: 'invalid public key' })

  // get_controlled_accounts: alice is named by the new permission.
  const controlled = await post<{ controlled_accounts: string[] }>('/v1/history/get_controlled_accounts', {
    controlling_account: 'alice',
  })
  assert.ok(controlled.controlled_accounts.includes(account), JSON.stringify(controlled))

  // get_links: the link is found by account, by contract and action, and by its permission (Hyperion ignores it).
  type Links = { total: { value: number; relation: string }; links: Record<string, unknown>[] }
  const links = await hyperion<Links>(`/v2/state/get_links?account=${account}`)
  assert.deepEqual(
    links.links.map(({ account, permission, code, action, block_num }) => ({
      account,
      permission,
      code,
      action,
      block_num,
    })),
    [{ account, permission: 'hot', code: 'eosio.token', action: 'transfer', block_num: linked.blockNum }],
  )
  assert.match(links.links[0].timestamp as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/)
  assert.deepEqual(links.total, { value: 1, relation: 'eq' })
  const dfuseLinks = await rest<{
    linked_permissions: { contract: string; action: string; permission_name: string }[]
  }>(`/v0/state/permission_links?account=${account}`)
  assert.deepEqual(dfuseLinks.linked_permissions, [
    { contract: 'eosio.token', action: 'transfer', permission_name: 'hot' },
  ])
  assert.deepEqual((await hyperion<Links>(`/v2/state/get_links?account=${account}&permission=active`)).links, [])
  const byAction = await hyperion<Links>('/v2/state/get_links?code=eosio.token&action=transfer&permission=hot')
  assert.ok(byAction.links.some((l) => l.account === account))

  // get_top_holders: the new token's holders, largest first, paged.
  type Holders = {
    contract: string
    holders: { owner: string; amount: number; symbol: string; updated_on: string }[]
  }
  const holders = await hyperion<Holders>(`/v2/state/get_top_holders?contract=eosio.token&symbol=${symbol}`)
  assert.equal(holders.contract, 'eosio.token')
  assert.deepEqual(
    holders.holders.map((h) => [h.owner, h.amount, h.symbol]),
    [
      ['alice', 993, symbol],
      [account, 7, symbol],
    ],
  )
  assert.deepEqual(
    (await hyperion<Holders>(`/v2/state/get_top_holders?contract=eosio.token&symbol=${symbol}&skip=1`)).holders,
    [holders.holders[1]],
  )

  assert.deepEqual(
    (await hyperion<Holders>(`/v2/state/get_top_holders?contract=eosio.token&skip=20000`)).holders,
    [],
    'a page past the 10,000th holder is served (empty here)',
  )

  // A balance that changes is answered current (Hyperion's get_tokens serves stale amounts).
  const spent = await pushActions(chain, [transfer('alice', account, `2 ${symbol}`)])
  await waitIndexed(p.api, spent.blockNum)
  assert.deepEqual(
    (await hyperion<Tokens>(`/v2/state/get_tokens?account=${account}`)).tokens.find((x) => x.symbol === symbol),
    { symbol, precision: 0, amount: 9, contract: 'eosio.token' },
  )

  // get_account: nodeos's account, the tokens and the links.
  const got = await hyperion<{
    account: { account_name: string }
    actions: unknown[]
    tokens: unknown[]
    links: unknown[]
  }>(`/v2/state/get_account?account=${account}`)
  assert.equal(got.account.account_name, account)
  // Its actions are get_actions' for the account, newest first, with the same total.
  type Actions = { actions: { trx_id: string; global_sequence: number }[]; total: { value: number } }
  const history = await hyperion<Actions>(`/v2/history/get_actions?account=${account}&limit=3&skip=1`)
  const paged = await hyperion<{ actions: Actions['actions']; total_actions: number }>(
    `/v2/state/get_account?account=${account}&limit=3&skip=1`,
  )
  assert.deepEqual(
    paged.actions.map((a) => [a.trx_id, a.global_sequence]),
    history.actions.map((a) => [a.trx_id, a.global_sequence]),
  )
  assert.equal(paged.actions.length, 3)
  assert.equal(paged.total_actions, history.total.value)
  assert.ok(paged.total_actions >= 5, 'newaccount, two transfers in, updateauth, linkauth, transfer out')
  assert.equal(got.tokens.length, 2)
  assert.deepEqual(got.links, [
    { timestamp: links.links[0].timestamp, permission: 'hot', code: 'eosio.token', action: 'transfer' },
  ])
  const missing = await send(`${p.api}/v2/state/get_account?account=nobody1`)
  assert.equal(missing.status, 404, missing.text)

  // The devchain has no voters table and no eosio.msig: empty answers, not errors.
  const voters = await hyperion<{ voter_count: number; voters: unknown[] }>('/v2/state/get_voters?producer=alice')
  assert.equal(voters.voter_count, 0)
  assert.deepEqual(voters.voters, [])
  const proposals = await hyperion<{ proposals: unknown[] }>('/v2/state/get_proposals?proposer=alice')
  assert.deepEqual(proposals.proposals, [])
  assert.deepEqual((await hyperion<{ scopes: string[] }>('/v2/state/get_voter_scopes?term=ali')).scopes, [])
}

const TITLE =
  "Hyperion's state routes answer from the store at head: tokens (precision 0 too, current after a transfer), key accounts, controlled accounts, links, top holders, account, and empty system tables"

test(`sqlite: ${TITLE}`, { timeout: 180_000 }, (t) => checkStateRoutes(t, []))

test(`postgres: ${TITLE}`, { timeout: 180_000, skip: PG_SKIP_REASON }, async (t) =>
  checkStateRoutes(t, ['--store', await withPostgresDatabase(t)]),
)
