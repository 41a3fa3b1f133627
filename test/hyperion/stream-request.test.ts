import { test } from 'node:test'
import assert from 'node:assert/strict'
import { matchesFilters } from '../../src/hyperion/stream/filters.ts'
import { parseActionRequest, parseDeltaRequest, StreamRequestError } from '../../src/hyperion/stream/request.ts'

const refused = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof StreamRequestError && pattern.test(e.message))

test('action requests: account or contract (action optional, "*" any), names, positions, filters', () => {
  const r = parseActionRequest({ contract: 'eosio.token', action: 'transfer', account: '', start_from: -10 })
  assert.equal(r.contract, 'eosio.token')
  assert.equal(r.action, 'transfer')
  assert.equal(r.account, undefined)
  assert.deepEqual(r.startFrom, { block: -10 })
  assert.deepEqual(r.readUntil, { block: 0 })
  assert.equal(parseActionRequest({ contract: 'eosio.token', action: '*' }).action, undefined)
  assert.deepEqual(parseActionRequest({ account: 'bob', start_from: '2024-05-16T19:25:44.500' }).startFrom, {
    timeMs: Date.parse('2024-05-16T19:25:44.500Z'),
  })
  assert.deepEqual(parseActionRequest({ account: 'bob', start_from: '120' }).startFrom, { block: 120 })
  refused(() => parseActionRequest(undefined), /object/)
  refused(() => parseActionRequest([]), /object/)
  refused(() => parseActionRequest({}), /account or a contract/)
  refused(() => parseActionRequest({ action: 'transfer' }), /account or a contract/)
  refused(() => parseActionRequest({ account: 'Bob' }), /invalid account/)
  refused(() => parseActionRequest({ account: 42 }), /string/)
  refused(() => parseActionRequest({ account: 'x'.repeat(100_000) }), /invalid account/)
  refused(() => parseActionRequest({ account: 'bob', start_from: 20, read_until: 10 }), /after read_until/)
  refused(() => parseActionRequest({ account: 'bob', start_from: 1.5 }), /block number/)
  refused(() => parseActionRequest({ account: 'bob', start_from: 'yesterday' }), /block number or an ISO time/)
  refused(() => parseActionRequest({ account: 'bob', filter_op: 'xor' }), /filter_op/)
  refused(() => parseActionRequest({ account: 'bob', filters: {} }), /array/)
  refused(() => parseActionRequest({ account: 'bob', filters: [{ field: 'a', value: {} }] }), /value/)
  refused(() => parseActionRequest({ account: 'bob', filters: [{ field: 'a', value: 1, operator: 'like' }] }), /one of/)
  refused(
    () => parseActionRequest({ account: 'bob', filters: Array.from({ length: 17 }, () => ({ field: 'a', value: 1 })) }),
    /at most/,
  )
  const twice = [
    { field: 'act.data.to', value: 'a' },
    { field: 'act.data.to', value: 'b' },
  ]
  refused(() => parseActionRequest({ account: 'bob', filters: twice }), /duplicate/)
  assert.equal(parseActionRequest({ account: 'bob', filters: twice, filter_op: 'or' }).filters.length, 2)
})

test('delta requests: code required; table, scope and payer optional ("*" any)', () => {
  const r = parseDeltaRequest({ code: 'eosio.token', table: 'accounts', scope: undefined, payer: '*' })
  assert.equal(r.code, 'eosio.token')
  assert.equal(r.table, 'accounts')
  assert.equal(r.scope, undefined)
  assert.equal(r.payer, undefined)
  refused(() => parseDeltaRequest({ table: 'accounts' }), /code/)
  refused(() => parseDeltaRequest({ code: 'eosio.token', scope: 'NOPE' }), /invalid scope/)
})

test('filters: dotted paths, @action projections, data fallback, operators, assets, arrays, and/or', () => {
  const action = {
    act: {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '1.5000 EOS', amount: 1.5, memo: 'hello world' },
    },
    block_num: 120,
  }
  const f = (field: string, value: string | number, operator = 'eq', asset?: string) =>
    ({ field, value, operator, ...(asset ? { asset } : {}) }) as Parameters<typeof matchesFilters>[1][number]
  assert.ok(matchesFilters(action, [f('act.data.to', 'bob')], 'and'))
  assert.ok(matchesFilters(action, [f('@transfer.to', 'bob')], 'and'))
  assert.ok(matchesFilters(action, [f('to', 'bob')], 'and'), 'falls back to act.data')
  assert.ok(!matchesFilters(action, [f('act.data.to', 'carol')], 'and'))
  assert.ok(matchesFilters(action, [f('act.authorization.actor', 'alice')], 'and'), 'arrays: any element')
  assert.ok(matchesFilters(action, [f('block_num', 100, 'gt'), f('block_num', '120', 'lte')], 'and'))
  assert.ok(!matchesFilters(action, [f('block_num', 120, 'lt')], 'and'))
  assert.ok(matchesFilters(action, [f('act.data.amount', 1, 'gte')], 'and'))
  assert.ok(matchesFilters(action, [f('act.data.memo', 'world', 'contains')], 'and'))
  assert.ok(matchesFilters(action, [f('act.data.memo', 'hello', 'starts_with')], 'and'))
  assert.ok(matchesFilters(action, [f('act.data.memo', 'world', 'ends_with')], 'and'))
  assert.ok(matchesFilters(action, [f('act.data.to', 'carol', 'ne')], 'and'))
  assert.ok(!matchesFilters(action, [f('act.data.to', 'bob', 'ne')], 'and'))
  assert.ok(matchesFilters(action, [f('act.data.quantity', 1, 'gt', 'EOS')], 'and'), 'asset amount')
  assert.ok(!matchesFilters(action, [f('act.data.quantity', 1, 'gt', 'TLOS')], 'and'), 'another symbol')
  assert.ok(!matchesFilters(action, [f('act.data.nope', 'x')], 'and'))
  assert.ok(matchesFilters(action, [f('act.data.to', 'carol'), f('act.data.to', 'bob')], 'or'))
  assert.ok(!matchesFilters(action, [f('act.data.to', 'carol'), f('act.data.from', 'alice')], 'and'))
  const delta = { code: 'eosio.token', table: 'accounts', data: { balance: '3.0000 EOS' } }
  assert.ok(matchesFilters(delta, [f('data.balance', 2, 'gt', 'EOS')], 'and'))
  assert.ok(matchesFilters(delta, [f('balance', '3.0000 EOS')], 'and'), 'falls back to data')
  assert.ok(matchesFilters(delta, [], 'and'))
})
