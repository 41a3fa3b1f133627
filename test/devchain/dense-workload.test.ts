import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Command } from 'commander'
import { addDevchainOptions } from '../../src/cli/options.ts'
import { decodeShipType } from '../../src/ship/index.ts'
import type { Devchain } from '../../src/devchain/index.ts'
import { withDevchain } from '../_helpers/devchain.ts'
import { until } from '../_helpers/store.ts'

/** Input transactions of each block after the first dense one (onblock and scheduled ones left out). */
function inputTransactions(devchain: Devchain): number[] {
  const counts: number[] = []
  for (let n = 3; n <= devchain.chain.head.num; n++) {
    const traces = decodeShipType<[string, { scheduled: boolean }][]>(
      'transaction_trace[]',
      devchain.chain.block(n)!.traces,
    )
    counts.push(traces.filter(([, x]) => !x.scheduled).length - 1)
  }
  return counts
}

for (const blockTimeMs of [250, 0]) {
  test(`--workload dense fills each block as the devchain produces it (block time ${blockTimeMs} ms)`, async (t) => {
    const warnings: string[] = []
    const devchain = await withDevchain(t, {
      blockTimeMs,
      workload: 'dense',
      log: { warn: (_fields, message) => warnings.push(message), info: () => undefined },
    })
    await until(() => devchain.chain.head.num >= 6, 'five dense blocks', 20_000)
    assert.deepEqual(warnings, [])
    // Every block but the one being produced when the workload started holds the profile's ~300 transactions.
    const counts = inputTransactions(devchain).slice(0, 4)
    assert.ok(
      counts.every((n) => n >= 290 && n <= 300),
      `transactions a block: ${counts.join(', ')}`,
    )
    assert.ok(devchain.chain.state.has('account', 'nftdemo'))
  })
}

test('--workload dense is one of the choices of antler devchain and antler dev', () => {
  for (const workload of ['none', 'demo'] as const) {
    const command = addDevchainOptions(new Command('devchain').exitOverride(), { workload })
    command.parse(['--workload', 'dense'], { from: 'user' })
    assert.equal(command.opts().workload, 'dense')
  }
})
