import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AntlerError } from '../../src/antelope/index.ts'
import { ALL_ACTIONS, planActionQuery } from '../../src/hyperion/action-query.ts'

const plan = (query: string) => planActionQuery(Object.fromEntries(new URLSearchParams(query)))
const expr = (query: string) => plan(query).expr

function refused(query: string, message: RegExp): void {
  assert.throws(
    () => plan(query),
    (error: unknown) =>
      error instanceof AntlerError && error.code === 'hyperion_bad_request_error' && message.test(error.message),
    query,
  )
}

test('account, filter and no filter', { timeout: 10_000 }, () => {
  assert.deepEqual(expr(''), ALL_ACTIONS)
  assert.deepEqual(expr('account=alice'), { or: [{ term: 'receiver:alice' }, { term: 'auth:alice' }] })
  assert.deepEqual(expr('filter=eosio.token:transfer'), {
    and: [{ term: 'account:eosio.token' }, { term: 'action:transfer' }],
  })
  assert.deepEqual(expr('filter=eosio.token:*,*:buyram'), {
    or: [{ term: 'account:eosio.token' }, { term: 'action:buyram' }],
  })
  assert.deepEqual(expr('filter=*:*'), ALL_ACTIONS, '*:* matches everything')
  assert.deepEqual(expr('account=bob&filter=tok:*'), {
    and: [{ or: [{ term: 'receiver:bob' }, { term: 'auth:bob' }] }, { term: 'account:tok' }],
  })
  refused('filter=nocolon', /contract:action/)
  refused('filter=a:b:c', /contract:action/)
})

test('value forms: term, a,b OR with !c NOT, a b AND, !a NOT; ranges on numbers only', { timeout: 10_000 }, () => {
  assert.deepEqual(expr('act.name=transfer'), { term: 'action:transfer' })
  assert.deepEqual(expr('act.name=transfer,issue,!retire'), {
    and: [{ or: [{ term: 'action:transfer' }, { term: 'action:issue' }] }, { not: { term: 'action:retire' } }],
  })
  assert.deepEqual(expr('act.name=!transfer,!issue'), {
    and: [{ not: { term: 'action:transfer' } }, { not: { term: 'action:issue' } }],
  })
  assert.deepEqual(expr('act.authorization.actor=alice bob'), {
    and: [{ term: 'auth:alice' }, { term: 'auth:bob' }],
  })
  assert.deepEqual(expr('act.account=!eosio'), { not: { term: 'account:eosio' } })
  assert.deepEqual(expr('receipts.receiver=bob'), { term: 'receiver:bob' })
  assert.deepEqual(expr(`trx_id=${'AB'.repeat(32)}`), { term: `trx_id:${'ab'.repeat(32)}` })
  assert.deepEqual(plan('block_num=10-20').blocks, { low: 10, high: 20 })
  assert.deepEqual(plan('block_num=7').blocks, { low: 7, high: 7 })
  assert.deepEqual(plan('global_sequence=0-500').seq, { low: 0, high: 500 }, "Hyperion's explorer pages with this")
  assert.deepEqual(plan('block_num=10-20&after=15&before=30').blocks, { low: 15, high: 20 })
  refused('act.name=a-b', /ranges/)
  refused('block_num=a,b', /number or a range/)
  refused('receipts.receiver=alice bob', /receivers/)
})

test('module prefixes and act.data: the indexed data fields, projections refused', { timeout: 10_000 }, () => {
  const transferTo = { and: [{ term: 'action:transfer' }, { term: 'data.to:bob' }] }
  assert.deepEqual(expr('transfer.to=bob'), transferTo)
  assert.deepEqual(expr('@transfer.to=bob'), transferTo)
  assert.deepEqual(expr('newaccount.newact=bob'), {
    and: [{ term: 'action:newaccount' }, { term: 'account:eosio' }, { term: 'data.name:bob' }],
  })
  assert.deepEqual(expr('voteproducer.producers=prod'), {
    and: [{ term: 'action:voteproducer' }, { term: 'account:eosio' }, { term: 'data.producers:prod' }],
  })
  assert.deepEqual(expr('act.data.from=alice'), { term: 'data.from:alice' })
  assert.deepEqual(expr('updateauth.auth.keys.key=K'), {
    and: [{ term: 'action:updateauth' }, { term: 'account:eosio' }, { term: 'data.auth.keys.key:K' }],
  })
  refused('transfer.amount=5', /projection/)
  refused('transfer.symbol=EOS', /projection/)
  refused('transfer.memo=hi', /projection/)
  refused('buyram.quant=1', /projection/)
  refused('act.data.memo=hi', /not indexed/)
  refused('act.authorization.permission=active', /no such field/)
  refused('producer=eosio', /no such field/)
  refused('receipts.global_sequence=5', /no such field/)
})

test('after and before: ISO times (a space for T, UTC unless told), else block numbers', { timeout: 10_000 }, () => {
  assert.deepEqual(plan('after=2024-05-16T19:25:44.500&before=2024-05-17 00:00:00').time, {
    afterMs: Date.UTC(2024, 4, 16, 19, 25, 44, 500),
    beforeMs: Date.UTC(2024, 4, 17),
  })
  assert.deepEqual(plan('after=2024-05-16T00:00:00%2B02:00').time, { afterMs: Date.UTC(2024, 4, 15, 22) })
  assert.equal(plan('after=2024-01-01').blocks.low, 2024, "Hyperion's quirk: no T, a block number")
  refused('after=2024-13-45T99:00', /after/)
  refused('before=soon', /before/)
})

test('unknown undotted keys are ignored, as Hyperion does', { timeout: 10_000 }, () => {
  assert.deepEqual(expr('account=alice&foo=bar&token=x'), expr('account=alice'))
})
