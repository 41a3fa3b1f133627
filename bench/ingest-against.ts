import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { currentRoot, prepareAgainstTree } from './against-tree.ts'
import { startBenchFeed } from './ship-feed.ts'
import { fmt, median } from './timing.ts'

export interface IngestAgainstOptions {
  /** The older commit (any git revision). */
  readonly rev: string
  readonly actions: number
  /** Pairs per store, each side once per pair. */
  readonly pairs: number
  /** Admin URL for throw-away PostgreSQL databases; undefined compares SQLite only. */
  readonly postgresUrl: string | undefined
  /** Remove REV's worktree at the end (else it is kept for the next run). */
  readonly removeTree?: boolean
}

interface Run {
  readonly actions: number
  readonly seconds: number
  /** The ingest process's CPU (user + system) while the clock ran; PostgreSQL's own work is not in it. */
  readonly cpuSeconds: number
}

const childScript = join(currentRoot, 'bench', 'ingest-child.ts')

/** One timed ingest of the feed by the code at `root` (bench/ingest-child.ts), in a process of its own. */
async function runChild(root: string, shipUrl: string, end: number, kind: string, location: string): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, root, shipUrl, String(end), kind, location], {
    cwd: currentRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  const line = out.trim().split('\n').pop() ?? ''
  if (code !== 0 || !line.startsWith('{'))
    throw new Error(`ingest child for ${root} (${kind}) exited with ${code}: ${out}`)
  return JSON.parse(line) as Run
}

const rate = (r: Run) => r.actions / r.seconds

/**
 * This build against an older commit, on the same bench chain in one run: both sides ingest the same SHiP feed (one
 * feed process, built by this tree) through bench/ingest-child.ts, each loading its own store and indexer, into a fresh
 * SQLite file or PostgreSQL database per ingest. `pairs` pairs per store, the stores taking turns pair by pair and the
 * sides taking turns within them (this build first in odd pairs, the older commit first in even ones), so slow drifts
 * of a shared machine fall on both. Each pair prints as it ends; the figures are the medians.
 */
export async function benchIngestAgainst(options: IngestAgainstOptions): Promise<Record<string, string | number>> {
  const tree = prepareAgainstTree(options.rev, (line) => console.log(line))
  const short = tree.commit.slice(0, 7)
  const dir = mkdtempSync(join(tmpdir(), 'antler-ingest-against-'))
  const feed = await startBenchFeed(Math.ceil(options.actions / 25))
  const admin = options.postgresUrl ? new pg.Client({ connectionString: options.postgresUrl }) : undefined
  await admin?.connect()
  const stores = [['SQLite', 'sqlite'], ...(admin ? [['PostgreSQL', 'postgres']] : [])] as const
  const runs = new Map<string, { current: Run[]; against: Run[] }>(
    stores.map(([label]) => [label, { current: [], against: [] }]),
  )
  let made = 0
  /** One ingest into a fresh store of `kind`, dropped after. */
  const ingestOnce = async (root: string, kind: string): Promise<Run> => {
    const name = `antler_against_${process.pid}_${made++}`
    if (kind === 'sqlite') {
      const path = join(dir, `${name}.sqlite`)
      try {
        return await runChild(root, feed.url, feed.head, kind, path)
      } finally {
        for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
      }
    }
    await admin!.query(`CREATE DATABASE ${name}`)
    try {
      const url = new URL(options.postgresUrl!)
      url.pathname = `/${name}`
      return await runChild(root, feed.url, feed.head, kind, url.toString())
    } finally {
      await admin!.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  }
  try {
    for (let pair = 1; pair <= options.pairs; pair++) {
      for (const [label, kind] of stores) {
        const sides = pair % 2 ? (['current', 'against'] as const) : (['against', 'current'] as const)
        const got: Partial<Record<'current' | 'against', Run>> = {}
        for (const side of sides) got[side] = await ingestOnce(side === 'current' ? currentRoot : tree.root, kind)
        const { current, against } = got as Record<'current' | 'against', Run>
        runs.get(label)!.current.push(current)
        runs.get(label)!.against.push(against)
        const counts =
          current.actions === against.actions ? '' : ` (action traces differ: ${current.actions} / ${against.actions})`
        const first = sides[0] === 'current' ? 'this build' : short
        const rates = `this build ${fmt(rate(current))}, ${short} ${fmt(rate(against))} action traces/s`
        const ratio = (rate(current) / rate(against)).toFixed(3)
        const cpu = `indexer CPU ${current.cpuSeconds.toFixed(1)} / ${against.cpuSeconds.toFixed(1)} s`
        console.log(
          `ingest against ${short}, ${label} pair ${pair} (${first} first): ${rates}, ratio ${ratio}; ${cpu}${counts}`,
        )
      }
    }
    const figures: Record<string, string | number> = {
      [`against: ${short} dependencies`]:
        tree.deps === 'shared'
          ? 'this tree’s node_modules (same lockfile versions)'
          : `its own npm ci (${tree.root})${tree.borrowed.length ? `, but ${tree.borrowed.join(', ')}` : ''}`,
      'against: blocks': feed.head,
    }
    const medianRate = (list: readonly Run[]) => median(list.map(rate))
    for (const [label] of stores) {
      const { current, against } = runs.get(label)!
      const ratio = median(current.map((c, i) => rate(c) / rate(against[i])))
      figures[`${label}: this build, median of ${options.pairs}: action traces/s`] = fmt(medianRate(current))
      figures[`${label}: ${short}, median of ${options.pairs}: action traces/s`] = fmt(medianRate(against))
      figures[`${label}: this build / ${short}, median of the pairs' ratios`] = ratio.toFixed(3)
      figures[`${label}: bar (≥ 0.95 × ${short})`] = ratio >= 0.95 ? 'met' : 'NOT met'
      // CPU per trace, the older commit's over this build's: above 1 when this build costs less CPU per trace.
      const cpuRatio = median(current.map((c, i) => against[i].cpuSeconds / c.cpuSeconds))
      figures[`${label}: indexer CPU, ${short} / this build, median of the pairs`] = cpuRatio.toFixed(3)
    }
    if (admin) {
      const pgOverSqlite = (side: 'current' | 'against') =>
        medianRate(runs.get('PostgreSQL')![side]) / medianRate(runs.get('SQLite')![side])
      figures['PostgreSQL / SQLite, this build (medians)'] = pgOverSqlite('current').toFixed(3)
      figures[`PostgreSQL / SQLite, ${short} (medians)`] = pgOverSqlite('against').toFixed(3)
      figures['bar (PostgreSQL ≥ 0.6 × SQLite, this build)'] = pgOverSqlite('current') >= 0.6 ? 'met' : 'NOT met'
    }
    return figures
  } finally {
    await admin?.end()
    feed.kill()
    rmSync(dir, { recursive: true, force: true })
    if (options.removeTree) tree.remove()
  }
}
