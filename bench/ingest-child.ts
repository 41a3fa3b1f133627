import { pathToFileURL } from 'node:url'

/**
 * One timed ingest in a process of its own, for `--only ingest --against REV` (bench/ingest-against.ts):
 * `node --import tsx bench/ingest-child.ts <root> <ship url> <end block> sqlite <file> | postgres <url>`.
 * It loads the store and the indexer from the source tree at `<root>` (this tree, or an older commit's worktree),
 * so both sides run their own code through the same harness: only the entry points every commit since the first
 * ingest bench exports are used (openSqliteStore, openPostgresStore, createIndexer with shipUrl, store, endBlockNum,
 * maxMessagesInFlight and onBlock's action count). The clock runs from the indexer's start to its end, as in
 * bench/ingest.ts; the store is opened (schema created) before it and closed after. Prints one JSON line:
 * `{"actions": N, "seconds": S, "cpuSeconds": C}` (C: this process's CPU meanwhile, user and system: steadier than
 * the clock on a shared machine, but without the PostgreSQL server's share).
 */
interface StoreLike {
  close(): Promise<void>
}
interface IngestModule {
  createIndexer(config: {
    shipUrl: string
    store: StoreLike
    endBlockNum: number
    maxMessagesInFlight: number
    onBlock: (block: { actions: number }) => void
  }): { run(): Promise<void> }
}
interface StoreModule {
  openSqliteStore(path: string): StoreLike
  openPostgresStore(url: string): Promise<StoreLike>
}

const [root, shipUrl, endBlock, kind, location] = process.argv.slice(2)
if (!root || !shipUrl || !endBlock || (kind !== 'sqlite' && kind !== 'postgres') || !location) {
  console.error('usage: ingest-child.ts <root> <ship url> <end block> sqlite <file> | postgres <url>')
  process.exit(2)
}
const load = <T>(path: string) => import(pathToFileURL(`${root}/${path}`).href) as Promise<T>
const { createIndexer } = await load<IngestModule>('src/ingest/index.ts')
const stores = await load<StoreModule>('src/store/index.ts')
const store = kind === 'sqlite' ? stores.openSqliteStore(location) : await stores.openPostgresStore(location)
let actions = 0
const cpuAtStart = process.cpuUsage()
const started = performance.now()
await createIndexer({
  shipUrl,
  store,
  endBlockNum: Number(endBlock),
  maxMessagesInFlight: 50,
  onBlock: (b) => (actions += b.actions),
}).run()
const seconds = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpuAtStart)
const cpuSeconds = (cpu.user + cpu.system) / 1e6
await store.close()
console.log(JSON.stringify({ actions, seconds, cpuSeconds }))
