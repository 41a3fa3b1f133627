import { fork } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'

/** What the feed process reports: when it serves, and its peak memory when it stops. */
export type FeedMessage =
  | { readonly kind: 'serving'; readonly port: number; readonly head: number }
  | { readonly kind: 'stopped'; readonly peakRssMiB: number }

export interface BenchFeed {
  readonly url: string
  /** The last block of the chain. */
  readonly head: number
  /** Stops the process and returns its peak RSS. */
  stop(): Promise<number>
  /** Ends the process at once (after a failure); nothing if it has stopped. */
  kill(): void
}

/**
 * Builds the bench chain (blocks of 20 transfers + 5 rawdb puts) in a process of its own and serves it over SHiP, as
 * nodeos would: the indexer's CPU and memory are measured without it. `savanna`: a Savanna chain (finality extension,
 * finality_data for v1 readers, LIB at head − 2). `profile: 'dense'`: blocks of the dense profile instead
 * (src/devchain/dense-profile.ts, about 300 transactions a block).
 */
export async function startBenchFeed(
  blocks: number,
  options: { savanna?: boolean; profile?: 'bench' | 'dense'; timeoutMs?: number } = {},
): Promise<BenchFeed> {
  const child = fork(
    new URL('./ship-feed-process.ts', import.meta.url),
    [String(blocks), ...(options.savanna ? ['savanna'] : []), ...(options.profile === 'dense' ? ['dense'] : [])],
    { stdio: 'inherit' },
  )
  const next = async (): Promise<FeedMessage> => {
    const [message] = (await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(([code]) => Promise.reject(new Error(`bench feed exited with ${code}`))),
      delay(options.timeoutMs ?? 3_600_000, undefined, { ref: false }).then(() => {
        child.kill()
        throw new Error(`bench feed: no answer within ${options.timeoutMs ?? 3_600_000} ms`)
      }),
    ])) as [FeedMessage]
    return message
  }
  const serving = await next()
  if (serving.kind !== 'serving') throw new Error(`bench feed: expected serving, got ${serving.kind}`)
  return {
    url: `ws://127.0.0.1:${serving.port}`,
    head: serving.head,
    async stop() {
      child.send('stop')
      const stopped = await next()
      if (stopped.kind !== 'stopped') throw new Error(`bench feed: expected stopped, got ${stopped.kind}`)
      return stopped.peakRssMiB
    },
    kill() {
      if (child.exitCode === null) child.kill()
    },
  }
}
