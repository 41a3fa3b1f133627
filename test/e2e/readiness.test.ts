import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import pg from 'pg'
import { ANTLER_BIN, envWithoutFlags, spawnAntler } from '../_helpers/cli.ts'
import { stopChild } from '../_helpers/child.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { isStandardError } from '../_helpers/platform.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { startTcpProxy } from '../_helpers/tcp-proxy.ts'
import { until } from '../_helpers/store.ts'

/** `GET path`: status and parsed body. */
async function get(api: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${api}${path}`, { signal: AbortSignal.timeout(10_000) })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** Each unlabelled series of `/metrics` named `antler_store_…`, `antler_chain_…` or `antler_ingest_…`, by name. */
async function chainMetrics(api: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${api}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
  const series = text.split('\n').map((line) => /^(antler_(?:store|chain|ingest)_\w+) (\S+)$/.exec(line))
  return Object.fromEntries(series.flatMap((m) => (m ? [[m[1], Number(m[2])]] : [])))
}

const apiFlags = ['--port', '0', '--grpc-port', '0', '--no-auth', '--log-level', 'warn']

test('antler serve whose node is replaced by one of another chain: the indexer stops, /readyz answers 503 with its ship_history_mismatch_error while /healthz stays 200', async (t) => {
  const first = await withDevchain(t)
  const other = await withDevchain(t)
  for (let i = 0; i < 30; i++) first.chain.produceBlock()
  for (let i = 0; i < 30; i++) other.chain.produceBlock()
  const ship = await startTcpProxy(t, first.ship)
  const serve = await spawnAntler(t, [
    'serve',
    '--ship',
    ship.url,
    '--chain-api',
    first.chainApi,
    '--data-dir',
    tempDir(t),
    ...apiFlags,
  ])
  const { api } = serve.ready
  await until(async () => (await get(api, '/readyz')).status === 200, 'ready once caught up')
  const ready = await get(api, '/readyz')
  assert.deepEqual(
    { status: ready.body.status, lag: ready.body.lag_blocks, max: ready.body.max_lag_blocks },
    { status: 'ready', lag: 0, max: 240 },
    JSON.stringify(ready.body),
  )
  // /metrics: where the store stands against the chain, and the in-process indexer's totals and pace.
  const metrics = await chainMetrics(api)
  const head = first.chain.head.num
  assert.deepEqual(
    [metrics.antler_store_head_block, metrics.antler_chain_head_block, metrics.antler_store_lag_blocks],
    [head, head, 0],
    JSON.stringify(metrics),
  )
  assert.equal(metrics.antler_store_irreversible_block, first.chain.lib.blockNum)
  assert.equal(metrics.antler_ingest_blocks_total, head, 'a fresh store: every block of the chain applied once')
  assert.ok(metrics.antler_ingest_action_traces_total > 0 && metrics.antler_ingest_row_changes_total > 0)
  assert.ok(metrics.antler_ingest_blocks_per_second > 0, 'blocks applied within the last seconds')
  assert.equal(metrics.antler_ingest_eta_seconds, 0)

  ship.switchTo(other.ship)
  await until(async () => (await get(api, '/readyz')).status === 503, '/readyz fails once the indexer stopped')
  const refused = await get(api, '/readyz')
  assert.ok(isStandardError(refused.body), JSON.stringify(refused.body))
  assert.equal(refused.body.code, 'api_not_ready_error')
  const details = refused.body.details as Record<string, unknown>
  assert.equal(details.reason, 'indexer_stopped')
  const indexerError = details.indexer_error as { code: string; message: string }
  assert.equal(indexerError.code, 'ship_history_mismatch_error')
  assert.match(
    indexerError.message,
    new RegExp(`chain id is ${other.chainId} but the store holds chain ${first.chainId}`),
  )
  assert.match(String(refused.body.message), /^Not ready: the indexer stopped: ship: another history/)
  assert.equal((await get(api, '/healthz')).status, 200, '/healthz stays liveness')
  assert.equal(serve.child.exitCode, null, 'the process still serves')
})

test(
  'an antler api replica: /readyz is 200 while its store keeps up, 503 lagging past --max-lag-blocks once antler index stops, 503 database_unreachable while PostgreSQL is cut, then 200 again',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const devchain = await withDevchain(t)
    for (let i = 0; i < 10; i++) devchain.chain.produceBlock()
    const store = await withPostgresDatabase(t)
    const dataDir = tempDir(t)
    const index = spawn(
      process.execPath,
      [ANTLER_BIN, 'index', '--ship', devchain.ship, '--store', store, '--data-dir', dataDir, '--log-level', 'warn'],
      {
        env: envWithoutFlags(),
      },
    )
    onCleanup(t, () => stopChild(index))
    const head = async () => {
      const client = new pg.Client({ connectionString: store })
      await client.connect()
      try {
        const value = (await client.query<{ value: string }>("SELECT value FROM meta WHERE key = 'head'")).rows[0]
          ?.value
        return value === undefined ? 0 : Number(value.split(':')[0])
      } catch {
        return 0 // no schema yet
      } finally {
        await client.end()
      }
    }
    await until(async () => (await head()) === devchain.chain.head.num, 'antler index caught up')

    // The replica reaches PostgreSQL through a proxy the test can cut.
    const proxy = await startTcpProxy(t, 'http://127.0.0.1:' + new URL(store).port)
    const viaProxy = new URL(store)
    viaProxy.port = new URL(proxy.url).port
    const replica = await spawnAntler(t, [
      'api',
      '--store',
      viaProxy.toString(),
      '--data-dir',
      dataDir,
      '--chain-api',
      devchain.chainApi,
      '--max-lag-blocks',
      '5',
      ...apiFlags,
    ])
    const { api } = replica.ready
    const ready = await get(api, '/readyz')
    assert.equal(ready.status, 200, JSON.stringify(ready.body))
    assert.equal(ready.body.max_lag_blocks, 5)

    await stopChild(index)
    for (let i = 0; i < 5; i++) devchain.chain.produceBlock()
    // The chain head is cached for 2 s.
    await new Promise((r) => setTimeout(r, 2100))
    assert.equal((await get(api, '/readyz')).status, 200, 'a lag of 5 blocks is within --max-lag-blocks 5')
    devchain.chain.produceBlock()
    await new Promise((r) => setTimeout(r, 2100))
    const lagging = await get(api, '/readyz')
    assert.equal(lagging.status, 503, JSON.stringify(lagging.body))
    assert.ok(isStandardError(lagging.body))
    assert.equal(lagging.body.code, 'api_not_ready_error')
    assert.deepEqual(
      lagging.body.details,
      {
        reason: 'lagging',
        head_block_num: devchain.chain.head.num - 6,
        chain_head_block_num: devchain.chain.head.num,
        lag_blocks: 6,
        max_lag_blocks: 5,
      },
      JSON.stringify(lagging.body),
    )
    assert.match(String(lagging.body.message), /lags the chain by 6 blocks, more than 5/)
    // /metrics of a replica: the same lag; no indexer in the process, so no pace.
    const metrics = await chainMetrics(api)
    assert.deepEqual(
      [metrics.antler_store_lag_blocks, metrics.antler_chain_head_block, metrics.antler_store_head_block],
      [6, devchain.chain.head.num, devchain.chain.head.num - 6],
      JSON.stringify(metrics),
    )
    assert.deepEqual(
      Object.keys(metrics).filter((name) => name.startsWith('antler_ingest_')),
      [],
    )

    proxy.cut()
    const cut = await get(api, '/readyz')
    assert.equal(cut.status, 503, JSON.stringify(cut.body))
    const details = cut.body.details as Record<string, unknown>
    assert.equal(details.reason, 'database_unreachable', JSON.stringify(cut.body))
    assert.equal(typeof details.database_error, 'string')

    proxy.restore()
    const catchUp = spawn(
      process.execPath,
      [ANTLER_BIN, 'index', '--ship', devchain.ship, '--store', store, '--data-dir', dataDir, '--log-level', 'warn'],
      {
        env: envWithoutFlags(),
      },
    )
    onCleanup(t, () => stopChild(catchUp))
    await until(async () => (await get(api, '/readyz')).status === 200, 'ready again once reachable and caught up')
  },
)
