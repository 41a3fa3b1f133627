import { test } from 'node:test'
import assert from 'node:assert/strict'
import { toHex } from '../../src/antelope/index.ts'
import { decodeShipType, encodeShipType } from '../../src/ship/index.ts'
import { Chain, bootChain, pushSigned } from '../../src/devchain/index.ts'

type Delta = [string, { name: string; rows: { present: boolean; data: string }[] }]

function deltasOf(chain: Chain, num: number): Delta[] {
  return decodeShipType<Delta[]>('table_delta[]', chain.block(num)!.deltas)
}

test('block 1 carries the full-state dump; every row re-encodes identically with the SHiP ABI', () => {
  const chain = new Chain({ dataDir: undefined, producers: 3, libDepth: 12 })
  bootChain(chain)
  for (const num of [1, 2]) {
    const deltas = deltasOf(chain, num)
    for (const [, delta] of deltas) {
      for (const row of delta.rows) {
        const decoded = decodeShipType(delta.name, Buffer.from(row.data, 'hex'))
        assert.equal(toHex(encodeShipType(delta.name, decoded)), row.data, `${delta.name} row of block ${num}`)
      }
    }
  }
  assert.deepEqual(
    deltasOf(chain, 1).map(([, d]) => d.name),
    ['account', 'account_metadata', 'permission', 'resource_limits'],
  )
  const order = [
    'account',
    'account_metadata',
    'code',
    'contract_table',
    'contract_row',
    'generated_transaction',
    'permission',
    'permission_link',
    'resource_limits',
    'resource_usage',
  ]
  const names = deltasOf(chain, 2).map(([, d]) => d.name)
  assert.deepEqual(
    names,
    order.filter((n) => names.includes(n)),
    'tables in nodeos order',
  )
  chain.close()
})

test('within a table: modified rows, then removed (old row), then created', () => {
  const chain = new Chain({ dataDir: undefined, producers: 1, libDepth: 12 })
  bootChain(chain)
  const put = (key: number, value: string) => ({
    account: 'rawdb',
    name: 'put',
    authorization: [{ actor: 'rawdb', permission: 'active' }],
    data: { scope: 'rawdb', table: 't', key: String(key), payer: 'rawdb', value },
  })
  pushSigned(chain, [put(1, 'aa'), put(2, 'bb')])
  chain.produceBlock()
  pushSigned(chain, [
    put(3, 'cc'),
    {
      account: 'rawdb',
      name: 'erase',
      authorization: [{ actor: 'rawdb', permission: 'active' }],
      data: { scope: 'rawdb', table: 't', key: '2' },
    },
    put(1, 'a1'),
  ])
  const block = chain.produceBlock()
  const rows = deltasOf(chain, block.num).find(([, d]) => d.name === 'contract_row')![1].rows
  const decoded = rows.map((r) => ({
    present: r.present,
    row: decodeShipType<[string, { primary_key: string; value: string }]>(
      'contract_row',
      Buffer.from(r.data, 'hex'),
    )[1],
  }))
  assert.deepEqual(
    decoded.map((d) => [d.present, String(d.row.primary_key), d.row.value]),
    [
      [true, '1', 'a1'],
      [false, '2', 'bb'],
      [true, '3', 'cc'],
    ],
  )
  chain.close()
})

test('a failed transaction leaves no delta and a row written then erased in one block leaves none', () => {
  const chain = new Chain({ dataDir: undefined, producers: 1, libDepth: 12 })
  bootChain(chain)
  assert.throws(() =>
    pushSigned(chain, [
      {
        account: 'rawdb',
        name: 'put',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { scope: 'rawdb', table: 'x', key: '1', payer: 'rawdb', value: 'ff' },
      },
      {
        account: 'rawdb',
        name: 'fail',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { message: 'no' },
      },
    ]),
  )
  pushSigned(chain, [
    {
      account: 'rawdb',
      name: 'put',
      authorization: [{ actor: 'rawdb', permission: 'active' }],
      data: { scope: 'rawdb', table: 'y', key: '5', payer: 'rawdb', value: 'ee' },
    },
  ])
  pushSigned(chain, [
    {
      account: 'rawdb',
      name: 'erase',
      authorization: [{ actor: 'rawdb', permission: 'active' }],
      data: { scope: 'rawdb', table: 'y', key: '5' },
    },
  ])
  const block = chain.produceBlock()
  const names = deltasOf(chain, block.num).map(([, d]) => d.name)
  assert.ok(!names.includes('contract_row') && !names.includes('contract_table'), names.join(','))
  chain.close()
})
