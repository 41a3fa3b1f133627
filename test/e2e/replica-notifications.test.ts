import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import pg from 'pg'
import WebSocket from 'ws'
import { ANTLER_BIN, spawnAntler } from '../_helpers/cli.ts'
import { stopChild } from '../_helpers/child.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { until } from '../_helpers/store.ts'

const BLOCK_MS = 200
/** The hub of a listening replica reads the store by itself only every 10 s: a gap this long means nobody woke it. */
const MAX_GAP_MS = 2000

interface HeadArrival {
  readonly num: number
  readonly at: number
}

/** The backend that holds a replica's LISTEN on the steps channel, if any (pg_stat_activity shows its last query). */
async function listeningBackend(admin: pg.Client, database: string): Promise<number | undefined> {
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN antler_steps'`,
    [database],
  )
  return rows[0]?.pid
}

/** The longest wait between two heads received in [from, to]. */
function largestGap(arrivals: readonly HeadArrival[], from: number, to: number): number {
  const inWindow = arrivals.filter((a) => a.at >= from && a.at <= to)
  let gap = 0
  for (let i = 1; i < inWindow.length; i++) gap = Math.max(gap, inWindow[i].at - inWindow[i - 1].at)
  return gap
}

test(
  'an antler api replica on PostgreSQL: woken by NOTIFY; when its LISTEN connection is killed it polls, listens again, and its stream has no gap',
  { skip: PG_SKIP_REASON, timeout: 120_000 },
  async (t) => {
    const store = await withPostgresDatabase(t)
    const database = new URL(store).pathname.slice(1)
    const devchain = await spawnAntler(t, [
      'devchain',
      '--data-dir',
      tempDir(t),
      '--chain-port',
      '0',
      '--ship-port',
      '0',
      '--block-time',
      String(BLOCK_MS),
      '--log-level',
      'warn',
    ])
    const indexer = spawn(process.execPath, [
      ANTLER_BIN,
      'index',
      '--ship',
      devchain.ready.ship,
      '--store',
      store,
      '--data-dir',
      tempDir(t),
      '--log-level',
      'warn',
    ])
    onCleanup(t, () => stopChild(indexer))
    const admin = new pg.Client({ connectionString: store })
    await admin.connect()
    onCleanup(t, () => admin.end())
    await until(
      async () => {
        try {
          return (await admin.query('SELECT 1 FROM blocks LIMIT 1')).rowCount === 1
        } catch {
          return false // the indexer has not created the schema yet
        }
      },
      'the indexer to store a block',
      30_000,
    )
    const replica = await spawnAntler(t, [
      'api',
      '--store',
      store,
      '--data-dir',
      tempDir(t),
      '--port',
      '0',
      '--grpc-port',
      '0',
      '--no-auth',
      '--log-level',
      'info',
    ])
    const listener = await listeningBackend(admin, database)
    assert.ok(listener, 'the replica listens on the steps channel')

    const arrivals: HeadArrival[] = []
    const socket = new WebSocket(`${replica.ready.api.replace(/^http/, 'ws')}/v1/stream`)
    onCleanup(t, () => socket.terminate())
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; data: { head_block_num: number } }
      if (message.type === 'head_info') arrivals.push({ num: message.data.head_block_num, at: Date.now() })
    })
    socket.send(JSON.stringify({ type: 'get_head_info', req_id: 'head', listen: true }))
    await until(() => arrivals.length >= 10, 'ten heads while listening', 20_000)
    const killedAt = Date.now()
    const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [listener])
    assert.equal(rows[0].ok, true)

    await until(
      async () => {
        const again = await listeningBackend(admin, database)
        return again !== undefined && again !== listener
      },
      'the replica to listen again',
      20_000,
    )
    const relistenedAt = Date.now()
    await until(() => arrivals.some((a) => a.at > relistenedAt + 2000), 'heads after listening again', 20_000)
    assert.match(replica.stderr(), /step notifications lost; polling the store/)
    assert.match(replica.stderr(), /listening for step notifications again/)

    // From the last head before the kill to the last one received: heads came at the block pace throughout.
    const gap = largestGap(arrivals, killedAt - MAX_GAP_MS, Date.now())
    assert.ok(gap < MAX_GAP_MS, `heads kept coming while the connection was lost and after (largest gap ${gap} ms)`)
    // Every head once, in order: no gap and no duplicate across the loss (the devchain makes no forks here).
    const nums = arrivals.map((a) => a.num)
    for (let i = 1; i < nums.length; i++) assert.equal(nums[i], nums[i - 1] + 1, `heads ${nums[i - 1]} then ${nums[i]}`)
  },
)
