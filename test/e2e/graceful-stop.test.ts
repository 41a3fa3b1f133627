import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { APIClient, Action, PackedTransaction, PrivateKey, SignedTransaction, Transaction } from '@wharfkit/antelope'
import { DEV_PRIVATE_KEY, token as tokenContract } from '../../src/devchain/index.ts'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil } from '../_helpers/push.ts'

const devKey = PrivateKey.from(DEV_PRIVATE_KEY)
const PUSHES = 20

/**
 * A signed transfer delayed by an hour, as a nodeos packed-transaction body: the chain takes it at once and stores it
 * as delayed, so an `in-block` push of it waits (for its execution) long past the test.
 */
async function delayedTransfer(chain: APIClient, memo: string): Promise<{ id: string; body: Record<string, unknown> }> {
  const info = await chain.v1.chain.get_info()
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
    },
    tokenContract.abi,
  )
  const transaction = Transaction.from({ ...info.getTransactionHeader(600), delay_sec: 3600, actions: [action] })
  const signed = SignedTransaction.from({
    ...transaction,
    signatures: [devKey.signDigest(transaction.signingDigest(info.chain_id))],
  })
  return {
    id: String(signed.id),
    body: JSON.parse(JSON.stringify(PackedTransaction.fromSigned(signed, 0))) as Record<string, unknown>,
  }
}

/** A WebSocket open on `url` (its subprotocol given) and the close code it receives, or -1 when cut without one. */
async function openSocket(url: string, protocol?: string): Promise<{ closed: Promise<number> }> {
  const socket = new WebSocket(url, protocol)
  const closed = new Promise<number>((resolve) => {
    socket.once('close', (code) => resolve(code))
    socket.once('error', () => resolve(-1))
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  return { closed }
}

test(`SIGTERM to antler dev while ${PUSHES} guaranteed pushes wait: each is answered (503 service_unavailable_error), sockets get a 1001 close frame, new requests are refused, exit 0 within 5 s`, async (t) => {
  const p = await startPlatform(t, ['--log-level', 'info'])
  const token = await issueToken(p, p.apiKey)
  const chain = new APIClient({ url: p.chainApi })
  const transfers = []
  for (let i = 0; i < PUSHES; i++) transfers.push(await delayedTransfer(chain, `graceful stop ${i}`))

  const stream = await openSocket(`${p.api.replace('http', 'ws')}/v1/stream?token=${token}`)
  const graphql = await openSocket(`${p.api.replace('http', 'ws')}/graphql?token=${token}`, 'graphql-transport-ws')

  let answeredBeforeSigterm = 0
  const answers = transfers.map(async ({ body }) => {
    const response = await fetch(`${p.api}/v1/chain/push_transaction`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-eos-push-guarantee': 'in-block' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    })
    const answer = { status: response.status, body: (await response.json()) as { code?: string; message?: string } }
    if (!signalled) answeredBeforeSigterm++
    return answer
  })
  // Every push reached the chain and waits: its transfer is in the store, delayed.
  let signalled = false
  for (const { id } of transfers)
    await pollUntil(
      async () => {
        const response = await fetch(`${p.api}/v0/transactions/${id}`, {
          headers: { authorization: `Bearer ${token}` },
        })
        await response.arrayBuffer()
        return response.status
      },
      (status) => status === 200,
      30_000,
    )
  assert.equal(answeredBeforeSigterm, 0, 'no guaranteed push was answered before SIGTERM')

  const started = Date.now()
  signalled = true
  p.cli.child.kill('SIGTERM')
  const settled = await Promise.allSettled(answers)
  const code = await p.cli.exited
  const elapsed = Date.now() - started

  for (const [i, s] of settled.entries()) {
    assert.equal(s.status, 'fulfilled', `push ${i} got an answer: ${s.status === 'rejected' ? String(s.reason) : ''}`)
    if (s.status !== 'fulfilled') continue
    assert.equal(s.value.status, 503, `push ${i}: ${JSON.stringify(s.value.body)}`)
    assert.equal(s.value.body.code, 'service_unavailable_error', `push ${i}`)
    // Answered by the guaranteed push's wait, not refused at the door: it had reached the chain.
    assert.match(String(s.value.body.message), /before the guarantee was met/, `push ${i}`)
  }
  assert.equal(await stream.closed, 1001, '/v1/stream gets a going-away close frame')
  assert.equal(await graphql.closed, 1001, '/graphql gets a going-away close frame')
  assert.equal(code, 0, `exit code; stderr tail: ${p.cli.stderr().slice(-2000)}`)
  assert.ok(elapsed < 5_000, `exited ${elapsed} ms after SIGTERM`)
  t.diagnostic(`exited ${elapsed} ms after SIGTERM`)
  assert.doesNotMatch(p.cli.stderr(), /shutdown took too long/)
  // After the exit nothing listens: a new request is refused.
  await assert.rejects(fetch(`${p.api}/healthz`, { signal: AbortSignal.timeout(5_000) }))
})
