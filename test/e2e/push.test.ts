import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import {
  APIClient,
  Action,
  PackedTransaction,
  PrivateKey,
  SignedTransaction,
  TimePointSec,
  Transaction,
} from '@wharfkit/antelope'
import { DEV_PRIVATE_KEY, token as tokenContract } from '../../src/devchain/index.ts'
import { until } from '../_helpers/store.ts'
import { dfuseClient, isStandardError, issueToken, startPlatform } from '../_helpers/platform.ts'

// @dfuse/client looks for a WebSocket class when it is created, even for REST-only use.
;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

const devKey = PrivateKey.from(DEV_PRIVATE_KEY)
const GUARANTEE = 'x-eos-push-guarantee'

type Json = Record<string, unknown>
type Answer = { status: number; body: Json; text: string }
type GuaranteedAnswer = {
  transaction_id: string
  block_id: string
  block_num: number
  processed: Json & { receipt: { status: string }; action_traces: Json[] }
}
type ChainBlock = {
  id: string
  block_num: number
  producer: string
  previous: string
  transactions: { trx: string | { id: string } }[]
}

/**
 * A signed eosio.token transfer as a nodeos packed-transaction body (zlib by default, as wharfkit
 * packs). TAPOS names the LIB, so a fork never invalidates it; `expiredBySec` makes one whose
 * expiration is already past in chain time.
 */
async function transfer(
  chain: APIClient,
  memo: string,
  opts: { compression?: 0 | 1; expiredBySec?: number; key?: PrivateKey } = {},
): Promise<{ id: string; body: Json }> {
  const info = await chain.v1.chain.get_info()
  const header = info.getTransactionHeader(600)
  if (opts.expiredBySec !== undefined)
    header.expiration = TimePointSec.fromMilliseconds(info.head_block_time.toMilliseconds() - opts.expiredBySec * 1000)
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
    },
    tokenContract.abi,
  )
  const transaction = Transaction.from({ ...header, actions: [action] })
  const signed = SignedTransaction.from({
    ...transaction,
    signatures: [(opts.key ?? devKey).signDigest(transaction.signingDigest(info.chain_id))],
  })
  return {
    id: String(signed.id),
    body: JSON.parse(JSON.stringify(PackedTransaction.fromSigned(signed, opts.compression ?? 1))) as Json,
  }
}

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal: AbortSignal = AbortSignal.timeout(60_000),
): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  })
  const text = await response.text()
  let parsed: Json = {}
  try {
    parsed = JSON.parse(text) as Json
  } catch {
    // Left empty: the assertion on the status shows the text.
  }
  return { status: response.status, body: parsed, text }
}

function transactionIds(block: ChainBlock): string[] {
  return block.transactions.map((t) => (typeof t.trx === 'string' ? t.trx : t.trx.id))
}

test("guaranteed pushes over HTTP on a running antler dev: in-block, handoffs:1/handoff:1 and irreversible answer blocks the chain holds, a fork while waiting is followed (moved or dropped and re-pushed), refusals are the chain's own, the token is required even with --open-chain-api", async (t) => {
  // LIB 40 blocks (4 s) behind head: a block is still reversible when a fork comes a second later.
  const p = await startPlatform(t, ['--block-time', '100', '--lib-depth', '40', '--open-chain-api'])
  const token = await issueToken(p, p.apiKey)
  const authorization = `Bearer ${token}`
  const chain = new APIClient({ url: p.chainApi })

  const push = (
    body: unknown,
    guarantee: string | undefined,
    opts: { path?: string; auth?: boolean; signal?: AbortSignal } = {},
  ) =>
    post(
      `${p.api}/v1/chain/${opts.path ?? 'push_transaction'}`,
      body,
      { ...(opts.auth === false ? {} : { authorization }), ...(guarantee ? { [GUARANTEE]: guarantee } : {}) },
      opts.signal,
    )
  /** get_block through the API's passthrough. */
  const apiBlock = async (num: number): Promise<ChainBlock> => {
    const answer = await post(`${p.api}/v1/chain/get_block`, { block_num_or_id: num }, { authorization })
    assert.equal(answer.status, 200, answer.text)
    return answer.body as unknown as ChainBlock
  }
  const chainInfo = async () =>
    (await post(`${p.chainApi}/v1/chain/get_info`, {})).body as {
      head_block_num: number
      last_irreversible_block_num: number
    }

  /** The answer's shape, and right after it the chain holds its block at its height with the transaction in it. */
  async function assertAnswered(answer: Answer, id: string): Promise<GuaranteedAnswer> {
    assert.equal(answer.status, 200, answer.text)
    const result = answer.body as unknown as GuaranteedAnswer
    assert.deepEqual(Object.keys(result).sort(), ['block_id', 'block_num', 'processed', 'transaction_id'])
    assert.equal(result.transaction_id, id)
    const block = await apiBlock(result.block_num)
    assert.equal(block.id, result.block_id, `the chain's block ${result.block_num} is the answer's`)
    assert.ok(transactionIds(block).includes(id), `transaction ${id} in block ${result.block_num}`)
    assert.equal(result.processed.id, id)
    assert.equal(result.processed.block_num, result.block_num)
    assert.equal(result.processed.producer_block_id, result.block_id)
    assert.equal(result.processed.receipt.status, 'executed')
    assert.deepEqual(
      result.processed.action_traces.map((a) => a.receiver),
      ['eosio.token', 'alice', 'bob'],
    )
    return result
  }

  /**
   * Scans the devchain's blocks from `fromNum` until one holds the transaction, then waits until the store has that
   * block (/healthz).
   */
  async function firstInclusion(id: string, fromNum: number): Promise<{ num: number; id: string }> {
    let next = fromNum
    let found: ChainBlock | undefined
    await until(async () => {
      const head = (await chainInfo()).head_block_num
      for (; next <= head && !found; next++) {
        const block = (await post(`${p.chainApi}/v1/chain/get_block`, { block_num_or_id: next }))
          .body as unknown as ChainBlock
        if (transactionIds(block).includes(id)) found = block
      }
      return found !== undefined
    }, `transaction ${id} in a block of the chain`)
    await until(async () => {
      const response = await fetch(`${p.api}/healthz`)
      return ((await response.json()) as { head_block_num: number | null }).head_block_num! >= found!.block_num
    }, `block ${found!.block_num} in the store`)
    return { num: found!.block_num, id: found!.id }
  }

  /**
   * Forks the devchain so that block `num` is replaced (a margin of up to three blocks, as the head moves meanwhile).
   */
  async function forkBelow(
    num: number,
    drop: string[] = [],
  ): Promise<{ fork_block_num: number; new_head: { block_num: number; block_id: string } }> {
    const info = await chainInfo()
    const depth = Math.min(info.head_block_num - num + 3, info.head_block_num - info.last_irreversible_block_num)
    const fork = await post(`${p.chainApi}/v1/devchain/fork`, { depth, drop })
    assert.equal(fork.status, 200, fork.text)
    const answer = fork.body as { fork_block_num: number; new_head: { block_num: number; block_id: string } }
    assert.ok(answer.fork_block_num <= num, `the fork (from ${answer.fork_block_num}) replaces block ${num}`)
    return answer
  }

  await t.test(
    'in-block (push_transaction and send_transaction): the block the chain holds at that height, with the transaction in it',
    async () => {
      const zlib = await transfer(chain, 'in-block zlib')
      await assertAnswered(await push(zlib.body, 'in-block'), zlib.id)
      const plain = await transfer(chain, 'in-block send', { compression: 0 })
      await assertAnswered(await push(plain.body, 'in-block', { path: 'send_transaction' }), plain.id)
    },
  )

  await t.test(
    'handoffs:1 (and handoff:1 through @dfuse/client apiRequest): a later block of another producer links to the answered block',
    async (st) => {
      const assertHandedOff = async (result: GuaranteedAnswer) => {
        const block = await apiBlock(result.block_num)
        let previous = block
        for (let num = result.block_num + 1; ; num++) {
          const next = await apiBlock(num)
          assert.equal(next.previous, previous.id, `block ${num} links to ${previous.block_num}`)
          if (next.producer !== block.producer) break
          previous = next
        }
      }
      const first = await transfer(chain, 'handoffs:1')
      await assertHandedOff(await assertAnswered(await push(first.body, 'handoffs:1'), first.id))

      const second = await transfer(chain, 'handoff:1 via @dfuse/client')
      const client = dfuseClient(st, p)
      // The client sends its JSON body as text/plain, with the token it issued itself.
      const result = await client.apiRequest<GuaranteedAnswer>(
        '/v1/chain/push_transaction',
        'POST',
        undefined,
        second.body,
        { 'X-Eos-Push-Guarantee': 'handoff:1' },
      )
      await assertHandedOff(
        await assertAnswered({ status: 200, body: result as unknown as Json, text: JSON.stringify(result) }, second.id),
      )
    },
  )

  await t.test("irreversible: the answered block is at or below the chain's LIB right after the answer", async () => {
    const trx = await transfer(chain, 'irreversible')
    const result = await assertAnswered(await push(trx.body, 'irreversible'), trx.id)
    assert.ok(
      (await chainInfo()).last_irreversible_block_num >= result.block_num,
      `block ${result.block_num} irreversible`,
    )
  })

  await t.test(
    'irreversible across a fork that moves the transaction to another block: the answer names the block on the surviving branch',
    async () => {
      const trx = await transfer(chain, 'moved by a fork')
      const from = (await chainInfo()).head_block_num
      const answer = push(trx.body, 'irreversible')
      const first = await firstInclusion(trx.id, from)
      await forkBelow(first.num)
      const result = await assertAnswered(await answer, trx.id)
      assert.notEqual(result.block_id, first.id, 'not the forked-out block')
      assert.ok((await chainInfo()).last_irreversible_block_num >= result.block_num)
    },
  )

  await t.test(
    'irreversible across a fork that drops the transaction: re-pushed, answered with the block that includes it again, never the dropped one',
    async () => {
      const trx = await transfer(chain, 'dropped by a fork')
      const from = (await chainInfo()).head_block_num
      const answer = push(trx.body, 'irreversible')
      const first = await firstInclusion(trx.id, from)
      const fork = await forkBelow(first.num, [trx.id])
      const result = await assertAnswered(await answer, trx.id)
      assert.notEqual(result.block_id, first.id, 'not the dropped block')
      assert.ok(
        result.block_num > fork.new_head.block_num,
        `included again after the fork's branch (block ${result.block_num} > ${fork.new_head.block_num})`,
      )
      assert.ok((await chainInfo()).last_irreversible_block_num >= result.block_num)
    },
  )

  await t.test(
    "refusals: an expired or badly signed transaction fails fast with the chain's own status and body",
    async () => {
      const logged = p.cli.stderr().length
      for (const [what, trx] of [
        ['expired', await transfer(chain, 'expired', { expiredBySec: 10 })],
        ['bad signature', await transfer(chain, 'bad signature', { key: PrivateKey.generate('K1') })],
      ] as const) {
        for (const guarantee of ['in-block', 'irreversible']) {
          const started = Date.now()
          const answer = await push(trx.body, guarantee)
          assert.ok(Date.now() - started < 5_000, `${what}, ${guarantee}: answered in ${Date.now() - started} ms`)
          const direct = await post(`${p.chainApi}/v1/chain/push_transaction`, trx.body)
          assert.ok(direct.status >= 400, `${what}: the chain refuses it (${direct.status})`)
          assert.equal(answer.status, direct.status, `${what}, ${guarantee}: ${answer.text}`)
          // The chain's body verbatim; the expiry message names the block time of the moment.
          const moment = (text: string) => text.replace(/block time [0-9T:.-]+/, 'block time …')
          assert.equal(moment(answer.text), moment(direct.text), `${what}, ${guarantee}: the chain's body verbatim`)
        }
      }
      const expired = await transfer(chain, 'expired again', { expiredBySec: 10 })
      const answer = await push(expired.body, 'in-block')
      assert.equal((answer.body.error as { name?: string } | undefined)?.name, 'expired_tx_exception', answer.text)
      assert.doesNotMatch(p.cli.stderr().slice(logged), /unexpected error/)
    },
  )

  await t.test(
    "the token: a guaranteed push without one is 401 even with --open-chain-api and reaches no chain; the plain push needs none and is nodeos's own answer",
    async () => {
      const trx = await transfer(chain, 'no token')
      for (const guarantee of ['in-block', 'handoffs:1', 'irreversible']) {
        const refused = await push(trx.body, guarantee, { auth: false })
        assert.equal(refused.status, 401, refused.text)
        assert.ok(isStandardError(refused.body), refused.text)
        assert.equal(refused.body.code, 'auth_invalid_token_error')
      }
      const badToken = await post(`${p.api}/v1/chain/push_transaction`, trx.body, {
        authorization: 'Bearer not.a.token',
        [GUARANTEE]: 'in-block',
      })
      assert.equal(badToken.status, 401)
      assert.equal(badToken.body.code, 'auth_invalid_token_error')

      // Without the header: a plain passthrough, no token needed on the open chain API. That it is
      // not tx_duplicate shows the refused guaranteed pushes sent nothing to the chain.
      const plain = await push(trx.body, undefined, { auth: false })
      assert.equal(plain.status, 200, plain.text)
      assert.deepEqual(Object.keys(plain.body).sort(), ['processed', 'transaction_id'])
      assert.equal(plain.body.transaction_id, trx.id)
      const processed = plain.body.processed as { id: string; producer_block_id: unknown; receipt: { status: string } }
      assert.equal(processed.id, trx.id)
      assert.equal(processed.receipt.status, 'executed')
      assert.equal(processed.producer_block_id, null, 'nodeos answers before the block is produced')
      // And the same body again is the chain's tx_duplicate, verbatim, with or without the token.
      const again = await push(trx.body, undefined)
      const direct = await post(`${p.chainApi}/v1/chain/push_transaction`, trx.body)
      assert.equal(again.status, direct.status)
      assert.equal(again.text, direct.text)
      assert.equal((again.body.error as { name?: string }).name, 'tx_duplicate')
    },
  )

  await t.test(
    'a bad guarantee value or a body that is not a packed transaction is refused with a standard error before anything reaches the chain',
    async () => {
      const trx = await transfer(chain, 'bad guarantee')
      // ' ' arrives as an empty header value (fetch trims it): present, but no guarantee.
      for (const value of ['handoffs:4', 'in_block', 'IRREVERSIBLE', ' ']) {
        const answer = await push(trx.body, value)
        assert.equal(answer.status, 400, `${value}: ${answer.text}`)
        assert.ok(isStandardError(answer.body), answer.text)
        assert.equal(answer.body.code, 'push_invalid_guarantee_error')
      }
      for (const [body, code] of [
        ['{not json', 'invalid_json_error'],
        ['', 'missing_body_error'],
        [{ signatures: [], compression: 0, packed_trx: 'zz' }, 'push_invalid_transaction_error'],
        [{ ...trx.body, compression: 7 }, 'push_invalid_transaction_error'],
      ] as const) {
        const answer = await push(body, 'in-block')
        assert.equal(answer.status, 400, answer.text)
        assert.ok(isStandardError(answer.body), answer.text)
        assert.equal(answer.body.code, code)
      }
      // Nothing was sent: the transaction is still new to the chain.
      assert.equal((await post(`${p.chainApi}/v1/chain/push_transaction`, trx.body)).status, 200)
    },
  )

  await t.test(
    'a client that goes away while waiting does not upset the API; the transaction still lands',
    async () => {
      const logged = p.cli.stderr().length
      const trx = await transfer(chain, 'client gone')
      const abort = new AbortController()
      const from = (await chainInfo()).head_block_num
      const waiting = push(trx.body, 'irreversible', { signal: abort.signal })
      await firstInclusion(trx.id, from)
      abort.abort()
      await assert.rejects(waiting)
      const next = await transfer(chain, 'after a client went away')
      await assertAnswered(await push(next.body, 'in-block'), next.id)
      // Not logged as a server fault (the log level is warn: an error line would show here).
      assert.doesNotMatch(p.cli.stderr().slice(logged), /unexpected error|AbortError/)
    },
  )
})
