import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { spawnAntler } from '../_helpers/cli.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { antlerKeys, isStandardError, issueToken } from '../_helpers/platform.ts'

const REDIS_URL = process.env.ANTLER_TEST_REDIS
const SKIP =
  PG_SKIP_REASON || (REDIS_URL ? false : 'ANTLER_TEST_REDIS is not set (CI sets it; e.g. redis://127.0.0.1:6379)')

/** The upgrade's HTTP status: 101 when the socket opened (then closed again), else the refusal's status. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { handshakeTimeout: 10_000 })
    socket.once('open', () => {
      socket.close()
      resolve(101)
    })
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
    socket.once('error', reject)
  })
}

test(
  'two antler api replicas on one PostgreSQL store share keys, the signing key, revocations and (through --redis) the issuance limits',
  { skip: SKIP },
  async (t) => {
    const store = await withPostgresDatabase(t)
    const dataDir = tempDir(t)
    // Keys are created before any replica runs: `antler keys` creates the store's schema on first use.
    const created = JSON.parse(
      antlerKeys({ dataDir }, ['create', '--type', 'server', '--name', 'shared', '--json', '--store', store]),
    ) as { id: string; key: string }
    // A prefix of this run's own, so that other runs on the same Redis count apart.
    const limits = {
      issuancePerKey: { server: { limit: 3, windowMs: 3_600_000 } },
      issuancePerIp: { limit: 100_000, windowMs: 60_000 },
    }
    const args = [
      'api',
      '--store',
      store,
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--grpc-port',
      '0',
      '--redis',
      REDIS_URL!,
      '--rate-limits',
      JSON.stringify(limits),
      '--log-level',
      'warn',
    ]
    const [a, b] = await Promise.all([spawnAntler(t, args), spawnAntler(t, args)])
    const replicas = [{ api: a.ready.api }, { api: b.ready.api }]

    // Issuance counts are shared: 3 tokens across both replicas, then the 4th is refused on either.
    const tokenA = await issueToken(replicas[0], created.key)
    await issueToken(replicas[1], created.key)
    await issueToken(replicas[0], created.key)
    for (const replica of replicas) {
      const refused = await fetch(`${replica.api}/v1/auth/issue`, {
        method: 'POST',
        body: JSON.stringify({ api_key: created.key }),
      })
      const body = await refused.json()
      assert.equal(refused.status, 429, JSON.stringify(body))
      assert.ok(isStandardError(body) && body.code === 'rate_limit_exceeded_error')
      assert.ok(Number(refused.headers.get('retry-after')) >= 1)
    }

    // A token issued by one replica is accepted by the other (one signing key, derived from the store's secret).
    const stream = (replica: { api: string }, token: string) =>
      `${replica.api.replace('http', 'ws')}/v1/stream?token=${token}`
    assert.equal(await upgradeStatus(stream(replicas[1], tokenA)), 101)
    assert.equal(await upgradeStatus(stream(replicas[0], tokenA)), 101)

    // A revocation made while both run reaches both.
    antlerKeys({ dataDir }, ['revoke', created.id, '--store', store])
    const deadline = Date.now() + 5000
    let statuses = await Promise.all(replicas.map((r) => upgradeStatus(stream(r, tokenA))))
    while (statuses.some((s) => s !== 401) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      statuses = await Promise.all(replicas.map((r) => upgradeStatus(stream(r, tokenA))))
    }
    assert.deepEqual(statuses, [401, 401], "both replicas refuse the revoked key's token")
  },
)
