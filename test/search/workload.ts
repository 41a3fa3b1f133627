import { ABI, Serializer } from '@wharfkit/antelope'
import { RAWDB_ABI } from '../../src/devchain/index.ts'
import { transferAction, type SearchHarness } from './harness.ts'

/*
 * The seeded workload of the search tests (and the GraphQL stream tests): transfers, multi-action transactions, rawdb
 * puts and erases that consume and release RAM and touch tables, notifications, inline actions, random forks; and
 * random queries over the terms a chain really holds.
 */

const USERS = ['alice', 'bob', 'carol'] as const
const QUANTITIES = ['0.0001 EOS', '0.0002 EOS', '0.0100 EOS', '1.0000 EOS']
const rawdbAbi = ABI.from(RAWDB_ABI as unknown as ABI.Def)
const notifyData = (recipients: string[]) =>
  Buffer.from(Serializer.encode({ abi: rawdbAbi, type: 'notify', object: { recipients } }).array).toString('hex')

/** One block of random transactions; sometimes a fork of the reversible blocks after it. */
export function workloadStep(h: SearchHarness, rand: () => number, allowFork = true): void {
  const int = (n: number) => Math.floor(rand() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]
  const user = () => pick(USERS)
  for (let k = int(4); k > 0; k--) {
    const from = user()
    const to = pick(USERS.filter((u) => u !== from))
    const rawdb = (name: string, data: Record<string, unknown>, actor: string = 'rawdb') => ({
      account: 'rawdb',
      name,
      authorization: [{ actor, permission: 'active' }],
      data,
    })
    switch (int(7)) {
      case 0:
      case 1:
        h.push([transferAction(from, to, pick(QUANTITIES))])
        break
      case 2:
        h.push([transferAction(from, to, pick(QUANTITIES)), transferAction(to, user(), pick(QUANTITIES))])
        break
      case 3: {
        const payer = user()
        h.push([
          rawdb(
            'put',
            {
              scope: pick(['alice', 'bob', 'zeta']),
              table: pick(['rows', 'notes']),
              key: String(int(5)),
              payer,
              value: '01',
            },
            payer,
          ),
        ])
        break
      }
      case 4: {
        const scope = pick(['alice', 'bob', 'zeta'])
        const table = pick(['rows', 'notes'])
        const key = int(5)
        const row = h.chain.state.get(
          'contract_row',
          `rawdb\u0000${scope}\u0000${table}\u0000${key.toString(16).padStart(16, '0')}`,
        ) as { payer?: string } | undefined
        if (row?.payer) h.push([rawdb('erase', { scope, table, key: String(key) }, row.payer)])
        break
      }
      case 5:
        h.push([rawdb('notify', { recipients: [user(), user()].filter((u, i, all) => all.indexOf(u) === i) })])
        break
      default:
        h.push([
          rawdb('send', {
            account: 'rawdb',
            name: 'notify',
            authorization: [{ actor: 'rawdb', permission: 'active' }],
            data: notifyData([user()]),
          }),
        ])
    }
  }
  h.chain.produceBlock()
  const reversible = h.chain.head.num - h.chain.lib.blockNum
  if (allowFork && reversible > 1 && rand() < 0.08) h.chain.fork(1 + int(Math.min(reversible - 1, 5)))
}

/** A random query over `pool` (real terms) and a few that no action has, rendered in the query language. */
export function randomQuery(rand: () => number, pool: readonly string[], depth = 0): string {
  const int = (n: number) => Math.floor(rand() * n)
  const term = () => {
    const r = rand()
    if (r < 0.12) return `${['input', 'notif', 'scheduled'][int(3)]}:${rand() < 0.5}`
    if (r < 0.17) return `${['receiver', 'data.to', 'db.table', 'auth'][int(4)]}:nosuch`
    const t = pool[int(pool.length)]
    const colon = t.indexOf(':')
    const value = t.slice(colon + 1)
    return /^[A-Za-z0-9._@/-]+$/.test(value) && value !== 'true' && value !== 'false'
      ? t
      : `${t.slice(0, colon)}:"${value}"`
  }
  const n = 1 + int(depth === 0 ? 3 : 2)
  const items: string[] = []
  for (let i = 0; i < n; i++) {
    const neg = rand() < 0.2 ? '-' : ''
    items.push(depth < 2 && rand() < 0.3 ? `${neg}(${randomQuery(rand, pool, depth + 1)})` : `${neg}${term()}`)
  }
  const op = rand() < 0.4 ? ' OR ' : rand() < 0.5 ? ' AND ' : ' '
  return items.join(op)
}
