import type { FastifyInstance } from 'fastify'
import { createFailureLog, type FailureLogger } from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import { Chain as ChainImpl } from './chain/chain.ts'
import { bootChain } from './chain/boot.ts'
import type { PackedTransactionInput } from './chain/intake.ts'
import { buildChainApi } from './chain-api.ts'
import { startShipServer, type ShipServer } from './ship-server.ts'
import { createDemoWorkload } from './workload.ts'
import { createDenseWorkload } from './dense-workload.ts'
import type { StoredBlock } from './storage/block-log.ts'

/** How the devchain runs: what its flags set (docs/DEVCHAIN.md). */
export interface DevchainConfig {
  /** Block log location; undefined keeps the chain in memory. */
  readonly dataDir: string | undefined
  readonly host: string
  /** 0 picks a free port. */
  readonly chainPort: number
  readonly shipPort: number
  /** 0: a block as soon as a transaction arrives (and on /v1/devchain/produce). */
  readonly blockTimeMs: number
  readonly libDepth: number
  readonly producers: number
  /** Chance of a random fork after each produced block. */
  readonly forkRate: number
  /** `dense`: about 300 transactions a block, modelled on mainnet (src/devchain/dense-profile.ts). */
  readonly workload: 'demo' | 'dense' | 'none'
  /** Savanna finality (Spring): finality extension and data, LIB at head − 2, `POST /v1/devchain/finality`. */
  readonly savanna?: boolean
  readonly random?: () => number
  /** An unexpected error of a `/v1/chain` request. */
  readonly onError?: (error: unknown) => void
  /** Where block production and the workload log their failures (first in full, repeats counted). */
  readonly log?: FailureLogger
}

export interface Devchain {
  readonly chain: Chain
  readonly chainApi: string
  readonly ship: string
  readonly chainId: string
  close(): Promise<void>
}

export const DEVCHAIN_DEFAULTS = {
  host: '127.0.0.1',
  chainPort: 8888,
  shipPort: 8089,
  blockTimeMs: 500,
  libDepth: 12,
  producers: 3,
  forkRate: 0,
  workload: 'none',
} as const

/** Starts the chain, its producer loop, the SHiP server and the /v1/chain server. */
export async function startDevchain(config: DevchainConfig): Promise<Devchain> {
  const chain = new ChainImpl({
    dataDir: config.dataDir,
    producers: config.producers,
    libDepth: config.libDepth,
    savanna: config.savanna,
  })
  if (chain.head.num === 1) bootChain(chain)
  const random = config.random ?? Math.random

  const maybeFork = () => {
    if (config.forkRate <= 0 || random() >= config.forkRate) return
    const reversible = chain.head.num - chain.lib.blockNum
    if (reversible < 1) return
    chain.fork(1 + Math.floor(random() * Math.min(reversible, config.libDepth)))
  }

  const produce = (blocks: number): StoredBlock => {
    let block = chain.head
    for (let i = 0; i < blocks; i++) {
      block = chain.produceBlock()
      maybeFork()
    }
    return block
  }

  const push = (input: PackedTransactionInput) => {
    const applied = chain.pushTransaction(input)
    if (config.blockTimeMs === 0) {
      const block = chain.produceBlock()
      return { trace: applied.trace, block, blockNum: block.num, blockSlot: block.slot }
    }
    return { trace: applied.trace, block: undefined, blockNum: applied.blockNum, blockSlot: applied.blockSlot }
  }

  let api: FastifyInstance | undefined
  let ship: ShipServer | undefined
  let producerTimer: NodeJS.Timeout | undefined
  let workload: { stop(): void } | undefined
  try {
    ship = await startShipServer({ chain, host: config.host, port: config.shipPort })
    api = await buildChainApi({
      chain,
      push,
      produce,
      fork: (depth, drop) => chain.fork(depth, drop),
      onError: config.onError,
    })
    await api.listen({ host: config.host, port: config.chainPort })
  } catch (error) {
    await ship?.close()
    await api?.close()
    chain.close()
    throw error
  }
  const production = createFailureLog({ log: config.log, label: 'devchain: producing a block' })
  if (config.blockTimeMs > 0) {
    producerTimer = setInterval(() => {
      try {
        produce(1)
        production.recovered()
      } catch (error) {
        production.failed(error)
      }
    }, config.blockTimeMs)
  }
  if (config.workload === 'demo')
    workload = createDemoWorkload({
      chain,
      intervalMs: Math.max(200, config.blockTimeMs || 500),
      log: config.log,
    })
  if (config.workload === 'dense')
    workload = createDenseWorkload({
      chain,
      intervalMs: config.blockTimeMs || 500,
      produce: config.blockTimeMs === 0 ? () => produce(1) : undefined,
      log: config.log,
    })
  const chainPort = (api.server.address() as { port: number }).port
  return {
    chain,
    chainApi: `http://${config.host}:${chainPort}`,
    ship: `ws://${config.host}:${ship.port}`,
    chainId: chain.chainId,
    async close() {
      workload?.stop()
      if (producerTimer) clearInterval(producerTimer)
      production.close()
      await ship!.close()
      await api!.close()
      chain.close()
    },
  }
}
