import { createFailureLog, nameToBigInt, toHex, type FailureLogger } from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import { GENESIS_USERS, pushSigned } from './chain/boot.ts'
import { keyAuthority } from './chain/genesis.ts'

/**
 * The demo workload: token transfers between the genesis users, and now and then a new account
 * and a rawdb row, at a steady rate. Deterministic per step number, so runs are comparable.
 */
export function createDemoWorkload(args: { chain: Chain; intervalMs: number; log?: FailureLogger }): {
  stop(): void
} {
  // A tick failing every interval (a chain refusing the demo's transactions) is one line, its repeats counted.
  const failures = createFailureLog({ log: args.log, label: 'devchain workload: a step' })
  let step = 0
  const tick = () => {
    step++
    try {
      const from = GENESIS_USERS[step % 3]
      const to = GENESIS_USERS[(step + 1) % 3]
      pushSigned(args.chain, [
        {
          account: 'eosio.token',
          name: 'transfer',
          authorization: [{ actor: from, permission: 'active' }],
          data: { from, to, quantity: '0.0001 EOS', memo: `demo ${step}` },
        },
      ])
      if (step % 10 === 0) {
        const name = `demo${(step / 10)
          .toString(36)
          .padStart(8, 'a')
          .replace(/[06789]/g, 'z')}`.slice(0, 12)
        if (!args.chain.state.has('account', name)) {
          pushSigned(args.chain, [
            {
              account: 'eosio',
              name: 'newaccount',
              authorization: [{ actor: 'eosio', permission: 'active' }],
              data: { creator: 'eosio', name, owner: keyAuthority(), active: keyAuthority() },
            },
          ])
        }
        const value = toHex(new Uint8Array(Buffer.from(`demo row ${step}`, 'utf8')))
        pushSigned(args.chain, [
          {
            account: 'rawdb',
            name: 'put',
            authorization: [{ actor: 'rawdb', permission: 'active' }],
            data: {
              scope: 'demo',
              table: 'rows',
              key: String(nameToBigInt(from) + BigInt(step)),
              payer: 'rawdb',
              value,
            },
          },
        ])
      }
      failures.recovered()
    } catch (error) {
      failures.failed(error)
    }
  }
  const timer = setInterval(tick, args.intervalMs)
  return {
    stop: () => {
      clearInterval(timer)
      failures.close()
    },
  }
}
