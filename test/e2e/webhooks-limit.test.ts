import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnAntler } from '../_helpers/cli.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { antlerKeys, isStandardError, issueToken } from '../_helpers/platform.ts'

/*
 * The per-key subscription limit under concurrency: two `antler api` replicas on one PostgreSQL store take 20
 * concurrent creates with the same key, half each. The store counts and inserts atomically (an advisory lock per
 * owner), so exactly `LIMIT` are created and every other create is refused with webhook_limit_exceeded_error: a count
 * then an insert, with awaits between them, let concurrent creates pass the limit together.
 */

const LIMIT = 5
const CREATES = 20

test(
  `two antler api replicas on one PostgreSQL store: of ${CREATES} concurrent creates with one key, exactly ${LIMIT} (the limit) are created`,
  { skip: PG_SKIP_REASON },
  async (t) => {
    const store = await withPostgresDatabase(t)
    const dataDir = tempDir(t)
    // The key is created before any replica runs: `antler keys` creates the store's schema on first use.
    const created = JSON.parse(
      antlerKeys({ dataDir }, ['create', '--type', 'server', '--name', 'limited', '--json', '--store', store]),
    ) as { id: string; key: string }
    const args = [
      'api',
      ...['--store', store, '--data-dir', dataDir, '--port', '0', '--grpc-port', '0'],
      ...['--webhook-max-subscriptions', String(LIMIT), '--webhook-allow-cidr', 'loopback', '--log-level', 'warn'],
    ]
    const replicas = (await Promise.all([spawnAntler(t, args), spawnAntler(t, args)])).map((r) => r.ready.api)
    const tokens = await Promise.all(replicas.map((api) => issueToken({ api }, created.key)))

    const create = async (i: number) => {
      const replica = i % 2
      const response = await fetch(`${replicas[replica]}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens[replica]}`, 'content-type': 'application/json' },
        // Nothing is indexed, so nothing is ever delivered to this address.
        body: JSON.stringify({ url: `http://127.0.0.1:9/hook-${i}`, query: 'receiver:eosio.token' }),
      })
      return { status: response.status, body: (await response.json()) as unknown }
    }
    const answers = await Promise.all(Array.from({ length: CREATES }, (_, i) => create(i)))

    const statuses = answers.map((a) => a.status)
    assert.equal(statuses.filter((s) => s === 201).length, LIMIT, `statuses: ${statuses.join(' ')}`)
    for (const { status, body } of answers.filter((a) => a.status !== 201)) {
      assert.equal(status, 429, JSON.stringify(body))
      assert.ok(isStandardError(body) && body.code === 'webhook_limit_exceeded_error', JSON.stringify(body))
      assert.deepEqual(body.details, { kind: 'webhook subscriptions', limit: LIMIT })
    }
    // Both replicas list the same LIMIT subscriptions: the ones created, no more.
    const createdIds = answers.flatMap((a) => (a.status === 201 ? [(a.body as { id: string }).id] : [])).sort()
    for (const [replica, api] of replicas.entries()) {
      const response = await fetch(`${api}/v1/webhooks`, { headers: { authorization: `Bearer ${tokens[replica]}` } })
      const { webhooks } = (await response.json()) as { webhooks: { id: string }[] }
      assert.deepEqual(webhooks.map((w) => w.id).sort(), createdIds)
    }
  },
)
