import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  APIClient,
  APIError,
  Action,
  PackedTransaction,
  PrivateKey,
  SignedTransaction,
  Transaction,
} from '@wharfkit/antelope'
import { DEV_PRIVATE_KEY, token as tokenContract } from '../../src/devchain/index.ts'
import { spawnAntler } from '../_helpers/cli.ts'
import { until } from '../_helpers/store.ts'
import { isStandardError, issueToken, startPlatform } from '../_helpers/platform.ts'

const devKey = PrivateKey.from(DEV_PRIVATE_KEY)

type Answer = { status: number; type: string | null; text: string }

/** A raw call: status, content type and body text exactly as received. */
async function raw(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', ...init, signal: AbortSignal.timeout(10_000) })
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
}

/** A signed eosio.token transfer (TAPOS from the client's get_info), signed with `key` (the dev key unless given). */
async function signedTransfer(
  client: APIClient,
  args: { memo: string; from?: string; to?: string; key?: PrivateKey },
): Promise<SignedTransaction> {
  const from = args.from ?? 'alice'
  const info = await client.v1.chain.get_info()
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: from, permission: 'active' }],
      data: { from, to: args.to ?? 'bob', quantity: '0.0001 EOS', memo: args.memo },
    },
    tokenContract.abi,
  )
  const transaction = Transaction.from({ ...info.getTransactionHeader(600), actions: [action] })
  const signature = (args.key ?? devKey).signDigest(transaction.signingDigest(info.chain_id))
  return SignedTransaction.from({ ...transaction, signatures: [signature] })
}

/** Runs `call` and returns the APIError it must raise. */
async function apiError(call: () => Promise<unknown>): Promise<APIError> {
  try {
    await call()
  } catch (error) {
    assert.ok(error instanceof APIError, `an APIError, got ${String(error)}`)
    return error
  }
  assert.fail('the call succeeded')
}

test('the /v1/chain passthrough on a running antler dev: wharfkit APIClient works unchanged with a token, nodeos answers and errors come back verbatim, no token is 401, the token never reaches the chain, an unreachable chain is 502', async (t) => {
  const p = await startPlatform(t)
  const token = await issueToken(p, p.apiKey)
  const authorization = `Bearer ${token}`
  // wharfkit's FetchProvider sends `headers` with every call.
  const client = new APIClient({ url: p.api, headers: { authorization } })
  const direct = new APIClient({ url: p.chainApi })

  /** The same call through the API (with the token) and straight to the devchain. */
  const both = async (path: string, init: RequestInit = {}): Promise<{ api: Answer; chain: Answer }> => ({
    api: await raw(`${p.api}${path}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization },
    }),
    chain: await raw(`${p.chainApi}${path}`, init),
  })

  await t.test('get_info: the chain id of the ready line, the head of the devchain', async () => {
    const info = await client.v1.chain.get_info()
    assert.equal(String(info.chain_id), p.chainId)
    const head = (await direct.v1.chain.get_info()).head_block_num.toNumber()
    assert.ok(
      Math.abs(head - info.head_block_num.toNumber()) <= 5,
      `head ${info.head_block_num} through the API, ${head} on the chain`,
    )
    // GET and POST both pass, as on nodeos.
    const get = await raw(`${p.api}/v1/chain/get_info`, { method: 'GET', headers: { authorization } })
    assert.equal(get.status, 200)
    assert.equal(JSON.parse(get.text).chain_id, p.chainId)
  })

  await t.test('get_account, get_currency_balance, get_table_rows, get_abi: what the devchain answers', async () => {
    const account = await client.v1.chain.get_account('alice')
    assert.equal(String(account.account_name), 'alice')
    assert.equal(
      account.getPermission('active').required_auth.keys[0].key.toLegacyString(),
      devKey.toPublic().toLegacyString(),
    )
    const { api, chain } = await both('/v1/chain/get_account', { body: JSON.stringify({ account_name: 'alice' }) })
    assert.equal(api.status, 200)
    // The fields that follow the head block differ between two calls; the rest is the same.
    const moving = new Set(['head_block_num', 'head_block_time', 'last_usage_update_time'])
    const strip = (text: string) => JSON.parse(text, (key, value) => (moving.has(key) ? undefined : value)) as unknown
    assert.deepEqual(strip(api.text), strip(chain.text))
    assert.deepEqual(
      (await client.v1.chain.get_currency_balance('eosio.token', 'alice', 'EOS')).map(String),
      (await direct.v1.chain.get_currency_balance('eosio.token', 'alice', 'EOS')).map(String),
    )
    const stats = await client.v1.chain.get_table_rows({ code: 'eosio.token', scope: 'EOS', table: 'stat', json: true })
    assert.deepEqual(
      stats.rows,
      (await direct.v1.chain.get_table_rows({ code: 'eosio.token', scope: 'EOS', table: 'stat', json: true })).rows,
    )
    const abi = await client.v1.chain.get_abi('eosio.token')
    assert.deepEqual(
      abi.abi?.actions.map((a) => String(a.name)).sort(),
      (await direct.v1.chain.get_abi('eosio.token')).abi?.actions.map((a) => String(a.name)).sort(),
    )
  })

  await t.test(
    'push_transaction (zlib-packed by wharfkit), send_transaction and send_transaction2 through the API: executed, then in a block get_block shows through the API',
    async () => {
      const signed = await signedTransfer(client, { memo: 'e2e passthrough push' })
      assert.equal(
        PackedTransaction.fromSigned(signed).compression.toNumber(),
        1,
        'wharfkit packs with zlib by default',
      )
      const pushed = await client.v1.chain.push_transaction(signed)
      assert.equal(String(pushed.transaction_id), String(signed.id))
      assert.equal(pushed.processed.receipt.status, 'executed')
      assert.deepEqual(
        pushed.processed.action_traces.map((a) => String(a.receiver)),
        ['eosio.token', 'alice', 'bob'],
      )

      const sent = await client.v1.chain.send_transaction(
        await signedTransfer(client, { memo: 'e2e passthrough send', from: 'bob', to: 'alice' }),
      )
      assert.equal(sent.processed.receipt.status, 'executed')
      const sent2 = await client.v1.chain.send_transaction2(
        await signedTransfer(client, { memo: 'e2e passthrough send2' }),
      )
      assert.equal(sent2.processed.receipt?.status, 'executed')

      // The pushed transaction lands in the block its trace names (produced after the answer).
      const blockNum = pushed.processed.block_num
      await until(
        async () => (await direct.v1.chain.get_info()).head_block_num.toNumber() >= blockNum,
        `block ${blockNum} produced`,
        10_000,
      )
      const block = await client.v1.chain.get_block(blockNum)
      assert.equal(String(block.id), String((await direct.v1.chain.get_block(blockNum)).id))
      assert.ok(
        block.transactions.some((receipt) => String(receipt.id) === String(signed.id)),
        `transaction in block ${blockNum}`,
      )

      // Pushed again: the chain's tx_duplicate, raised by wharfkit, and the same status and body as the chain answers
      // directly.
      const duplicate = await apiError(() => client.v1.chain.push_transaction(signed))
      assert.equal(duplicate.name, 'tx_duplicate')
      assert.equal(duplicate.code, 3040008)
      const body = JSON.stringify(PackedTransaction.fromSigned(signed))
      const { api, chain } = await both('/v1/chain/push_transaction', { body })
      assert.deepEqual(api, chain)
      assert.equal(duplicate.response.status, chain.status)
      assert.deepEqual(duplicate.response.json, JSON.parse(chain.text))
    },
  )

  await t.test(
    "nodeos errors keep the chain's status and body exactly, and wharfkit raises APIError with the nodeos details",
    async () => {
      // An unknown account.
      const unknown = await apiError(() => client.v1.chain.get_account('nobody.here'))
      const directUnknown = await apiError(() => direct.v1.chain.get_account('nobody.here'))
      assert.equal(unknown.code, 3060002)
      assert.equal(unknown.name, 'account_query_exception')
      assert.equal(unknown.message, directUnknown.message)
      assert.deepEqual(unknown.details, directUnknown.details)
      assert.equal(unknown.response.status, directUnknown.response.status)
      assert.equal(unknown.response.text, directUnknown.response.text)
      let answers = await both('/v1/chain/get_account', { body: JSON.stringify({ account_name: 'nobody.here' }) })
      assert.deepEqual(answers.api, answers.chain)

      // A transfer signed with a key alice does not have.
      const forged = await signedTransfer(client, { memo: 'bad signature', key: PrivateKey.generate('K1') })
      const refused = await apiError(() => client.v1.chain.push_transaction(forged))
      const directRefused = await apiError(() => direct.v1.chain.push_transaction(forged))
      assert.ok(refused.response.status >= 400, `status ${refused.response.status}`)
      assert.equal(refused.code, directRefused.code)
      assert.equal(refused.name, directRefused.name)
      assert.ok(refused.code > 0 && refused.details.length > 0, `nodeos details: ${refused.response.text}`)
      assert.equal(refused.response.status, directRefused.response.status)
      assert.equal(refused.response.text, directRefused.response.text)
      answers = await both('/v1/chain/push_transaction', { body: JSON.stringify(PackedTransaction.fromSigned(forged)) })
      assert.deepEqual(answers.api, answers.chain)

      // A body that is not JSON, an endpoint the chain does not have, an unknown block.
      for (const [path, init] of [
        ['/v1/chain/get_account', { body: '{not json' }],
        ['/v1/chain/no_such_endpoint', { body: '{}' }],
        ['/v1/chain/get_block', { body: JSON.stringify({ block_num_or_id: 99_999_999 }) }],
      ] as const) {
        const { api, chain } = await both(path, init)
        assert.ok(chain.status >= 400, `${path}: the chain refuses (${chain.status})`)
        assert.deepEqual(api, chain, path)
      }
    },
  )

  await t.test(
    'without a token the passthrough is 401 auth_invalid_token_error (wharfkit raises APIError with that status); ?token= works instead of the header',
    async () => {
      const answer = await raw(`${p.api}/v1/chain/get_info`)
      assert.equal(answer.status, 401)
      const body = JSON.parse(answer.text)
      assert.ok(isStandardError(body), answer.text)
      assert.equal(body.code, 'auth_invalid_token_error')
      assert.equal(body.details?.reason, 'missing')
      const push = await raw(`${p.api}/v1/chain/push_transaction`, {
        body: JSON.stringify(PackedTransaction.fromSigned(await signedTransfer(client, { memo: 'no token' }))),
      })
      assert.equal(push.status, 401)
      assert.equal(JSON.parse(push.text).code, 'auth_invalid_token_error')

      const anonymous = await apiError(() => new APIClient({ url: p.api }).v1.chain.get_info())
      assert.equal(anonymous.response.status, 401)
      assert.equal((anonymous.response.json as { code: string }).code, 'auth_invalid_token_error')

      const byQuery = await raw(`${p.api}/v1/chain/get_info?token=${token}`)
      assert.equal(byQuery.status, 200)
      assert.equal(JSON.parse(byQuery.text).chain_id, p.chainId)
    },
  )

  await t.test(
    'an `antler api` on the same store in front of another chain API: the token (header or query) is not forwarded; a chain that is gone is 502 chain_unavailable_error (push_chain_unavailable_error for a guaranteed push)',
    async (st) => {
      const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = []
      const fake = createServer((request, response) => {
        let body = ''
        request.on('data', (d: Buffer) => (body += d))
        request.on('end', () => {
          seen.push({ url: request.url ?? '', headers: request.headers, body })
          response.writeHead(202, { 'content-type': 'application/json' }).end('{"seen":true}')
        })
      })
      await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve))
      st.after(() => fake.close())
      const fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`
      const replica = await spawnAntler(st, [
        'api',
        '--data-dir',
        p.dataDir,
        '--port',
        '0',
        '--grpc-port',
        '0',
        '--chain-api',
        fakeUrl,
        '--log-level',
        'warn',
      ])
      const api = replica.ready.api

      const answer = await raw(`${api}/v1/chain/get_info?token=${token}&keep=1`, {
        headers: { authorization, cookie: 'a=b', 'content-type': 'application/json' },
        body: '{"x":1}',
      })
      assert.deepEqual(answer, { status: 202, type: 'application/json', text: '{"seen":true}' })
      assert.equal(seen.length, 1)
      assert.equal(
        seen[0].url,
        '/v1/chain/get_info?keep=1',
        'the token parameter is dropped, the rest of the query kept',
      )
      assert.equal(seen[0].headers.authorization, undefined)
      assert.equal(seen[0].headers.cookie, undefined)
      assert.ok(!JSON.stringify(seen[0]).includes(token), 'the token appears nowhere in what the chain received')
      assert.equal(seen[0].body, '{"x":1}')
      assert.equal(seen[0].headers['content-type'], 'application/json')

      fake.closeAllConnections()
      await new Promise<void>((resolve) => fake.close(() => resolve()))
      const gone = await raw(`${api}/v1/chain/get_info`, { headers: { authorization } })
      assert.equal(gone.status, 502, gone.text)
      const body = JSON.parse(gone.text)
      assert.ok(isStandardError(body), gone.text)
      assert.equal(body.code, 'chain_unavailable_error')
      assert.equal(body.details?.reason, 'ECONNREFUSED')
      const wharf = await apiError(() => new APIClient({ url: api, headers: { authorization } }).v1.chain.get_info())
      assert.equal(wharf.response.status, 502)
      // A guaranteed push to a chain that is gone: the push service's own 502, also the standard error object.
      const signed = await signedTransfer(client, { memo: 'chain gone' })
      const pushed = await raw(`${api}/v1/chain/push_transaction`, {
        headers: { authorization, 'x-eos-push-guarantee': 'in-block' },
        body: JSON.stringify(PackedTransaction.fromSigned(signed)),
      })
      assert.equal(pushed.status, 502, pushed.text)
      const pushBody = JSON.parse(pushed.text)
      assert.ok(isStandardError(pushBody), pushed.text)
      assert.equal(pushBody.code, 'push_chain_unavailable_error')
    },
  )
})
