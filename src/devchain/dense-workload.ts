import { createFailureLog, type FailureLogger } from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import { pushDenseBlock } from './dense-profile.ts'

/**
 * The dense workload of a running devchain (`--workload dense`): each block gets the dense profile's transactions
 * (src/devchain/dense-profile.ts), pushed into the pending block once per block at the block time, so a developer
 * sees a busy chain indexed live. `produce`: when the devchain has no block time (blocks on demand), the workload
 * produces the block it filled, every 500 ms.
 */
export function createDenseWorkload(args: {
  chain: Chain
  intervalMs: number
  produce?: () => void
  log?: FailureLogger
}): { stop(): void } {
  // A transaction the chain refuses (each tick would repeat it) is one line, its repeats counted.
  const failures = createFailureLog({ log: args.log, label: 'devchain dense workload: a transaction' })
  const production = createFailureLog({ log: args.log, label: 'devchain dense workload: producing a block' })
  /** The head the pending block was filled after: a block is filled once, however the timers interleave. */
  let filledAfter: number | undefined
  const tick = () => {
    if (filledAfter !== args.chain.head.num) {
      filledAfter = args.chain.head.num
      const push = (trx: Parameters<typeof args.chain.pushDecodedTrusted>[0]) => {
        try {
          args.chain.pushDecodedTrusted(trx)
          failures.recovered()
        } catch (error) {
          failures.failed(error)
        }
      }
      // Building the block's transactions can fail too (a timer callback that throws would end the process).
      try {
        pushDenseBlock(args.chain, push, Date.now())
      } catch (error) {
        failures.failed(error)
      }
    }
    if (!args.produce) return
    try {
      args.produce()
      production.recovered()
    } catch (error) {
      production.failed(error)
    }
  }
  tick()
  const timer = setInterval(tick, args.intervalMs)
  return {
    stop: () => {
      clearInterval(timer)
      failures.close()
      production.close()
    },
  }
}
