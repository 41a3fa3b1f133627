import { test } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions } from '../_helpers/push.ts'
import { startWebhookReceiver } from '../_helpers/webhook-receiver.ts'

/*
 * A failing receiver is a delivery outcome (attempts), not a server failure: `antler dev` logging at info, with a
 * receiver answering 500 to its first FAILURES tries (as many as a minute of tries once a second, here 50 ms apart),
 * writes a bounded number of lines about it, and delivery resumes once the receiver recovers.
 */

const FAILURES = 60
/** What the server may write about the failing receiver during the whole test: a handful, not a line per try. */
const MAX_LINES = 3

interface LogLine {
  readonly level: number
  readonly msg: string
  readonly [field: string]: unknown
}

const logLines = (stderr: string): LogLine[] =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)

test(`a receiver answering 500 to ${FAILURES} tries costs at most ${MAX_LINES} log lines; delivery resumes`, async (t) => {
  const p = await startPlatform(t, ['--webhook-retries', '50ms', '--log-level', 'info'])
  const token = await issueToken(p, p.apiKey)
  const receiver = await startWebhookReceiver(t, { '/down': (_d, index) => ({ status: index < FAILURES ? 500 : 200 }) })
  const from = logLines(p.cli.stderr()).length
  const response = await fetch(`${p.api}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url('/down'), query: 'receiver:eosio.token action:transfer' }),
  })
  assert.equal(response.status, 201, await response.text())
  const chain = new APIClient({ url: p.chainApi })
  const transfer = (memo: string) =>
    pushActions(chain, [
      {
        account: 'eosio.token',
        name: 'transfer',
        actor: 'alice',
        data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
      },
    ])
  await transfer('while the receiver fails')
  const first = await pollUntil(
    async () => receiver.acknowledged('/down'),
    (acked) => acked.length >= 1,
    60_000,
  )
  const tries = receiver.deliveries.filter((d) => d.path === '/down')
  assert.equal(tries.length, FAILURES + 1, 'every failed try, then the one acknowledged')
  assert.ok(
    tries.every((d) => d.headers['webhook-id'] === first[0].headers['webhook-id']),
    'the same message until acknowledged',
  )
  // Delivery goes on after the recovery.
  await transfer('after the recovery')
  await pollUntil(
    async () => receiver.acknowledged('/down').length,
    (n) => n >= 2,
    20_000,
  )
  const lines = logLines(p.cli.stderr()).slice(from)
  // What the server wrote about deliveries and webhooks (request lines of the test's own calls aside), and every
  // warning or error: the failing receiver must not show as one line per try.
  const aboutIt = lines.filter(
    (l) => l.level >= 40 || (l.msg !== 'request' && /webhook|deliver/i.test(JSON.stringify(l))),
  )
  t.diagnostic(`${lines.length} lines logged, ${aboutIt.length} about webhooks or at warn and above`)
  assert.ok(
    aboutIt.length <= MAX_LINES,
    `${aboutIt.length} lines:\n${aboutIt.map((l) => JSON.stringify(l)).join('\n')}`,
  )
})
