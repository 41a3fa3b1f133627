import { parseArgs } from 'node:util'
import { benchDevchain } from './devchain.ts'

/**
 * `npm run bench [-- --actions N]`: runs every benchmark and prints its figures. Figures that
 * depend on the machine are given next to a limit measured in the same run.
 */
const { values } = parseArgs({
  options: {
    actions: { type: 'string', default: '1000000' },
    'transfers-per-block': { type: 'string', default: '20' },
    'rawdb-per-block': { type: 'string', default: '5' },
  },
})

const actions = Number(values.actions)
if (!Number.isInteger(actions) || actions < 1000) {
  console.error('bench: --actions must be a whole number of at least 1000')
  process.exit(2)
}

console.log(`# devchain: ${actions} actions, ${values['transfers-per-block']} transfers + ${values['rawdb-per-block']} rawdb puts per block`)
const figures = await benchDevchain({ actions, transfersPerBlock: Number(values['transfers-per-block']), rawdbPutsPerBlock: Number(values['rawdb-per-block']) })
for (const [name, value] of Object.entries(figures)) console.log(`${name}: ${value}`)
