import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AntlerError } from '../../src/antelope/index.ts'
import { parseSearchQuery, SEARCH_QUERY_LIMITS } from '../../src/search/index.ts'
import { mulberry32 } from '../_helpers/random.ts'

const t = (term: string) => ({ term })

test('terms, implicit and explicit AND, OR with lower precedence, nested parentheses, negation', () => {
  assert.deepEqual(parseSearchQuery('receiver:eosio.token'), t('receiver:eosio.token'))
  assert.deepEqual(parseSearchQuery('account:eosio.token action:transfer'), {
    and: [t('account:eosio.token'), t('action:transfer')],
  })
  assert.deepEqual(parseSearchQuery('account:eosio.token AND action:transfer && auth:alice'), {
    and: [t('account:eosio.token'), t('action:transfer'), t('auth:alice')],
  })
  // dfuse's one-level OR group, negated as a whole.
  assert.deepEqual(parseSearchQuery('account:eosio.token (data.to:bob OR data.from:bob)'), {
    and: [t('account:eosio.token'), { or: [t('data.to:bob'), t('data.from:bob')] }],
  })
  assert.deepEqual(parseSearchQuery('-(data.to:bob OR data.from:bob) receiver:x'), {
    and: [{ not: { or: [t('data.to:bob'), t('data.from:bob')] } }, t('receiver:x')],
  })
  // AND binds tighter than OR, without parentheses.
  assert.deepEqual(parseSearchQuery('receiver:1 action:x OR auth:y'), {
    or: [{ and: [t('receiver:1'), t('action:x')] }, t('auth:y')],
  })
  assert.deepEqual(parseSearchQuery('receiver:a || receiver:b || receiver:c'), {
    or: [t('receiver:a'), t('receiver:b'), t('receiver:c')],
  })
  // Nesting and negation at any depth.
  assert.deepEqual(parseSearchQuery('((receiver:a OR -(action:b auth:c)) -notif:true)'), {
    and: [
      { or: [t('receiver:a'), { not: { and: [t('action:b'), t('auth:c')] } }] },
      { not: { flag: 'notif', value: true } },
    ],
  })
  assert.deepEqual(parseSearchQuery('-receiver:a'), { not: t('receiver:a') })
})

test('values: bare words with @ . and digits, quoted in both quote styles with spaces, booleans as flags', () => {
  assert.deepEqual(parseSearchQuery('auth:alice@active'), t('auth:alice@active'))
  assert.deepEqual(parseSearchQuery('data.quantity:"1.0000 EOS"'), t('data.quantity:1.0000 EOS'))
  assert.deepEqual(parseSearchQuery("data.memo:'it is (here): OR there'"), t('data.memo:it is (here): OR there'))
  assert.deepEqual(parseSearchQuery('data.user.id:42 db.table:accounts/alice'), {
    and: [t('data.user.id:42'), t('db.table:accounts/alice')],
  })
  assert.deepEqual(parseSearchQuery('input:true scheduled:false'), {
    and: [
      { flag: 'input', value: true },
      { flag: 'scheduled', value: false },
    ],
  })
  // A quoted "true" is a string: a data field may hold it, a boolean field may not.
  assert.deepEqual(parseSearchQuery('data.is_active:"true"'), t('data.is_active:true'))
  for (const field of [
    'receiver',
    'account',
    'action',
    'auth',
    'ram.consumed',
    'ram.released',
    'db.table',
    'db.key',
    'creator',
    'parent.receiver',
    'parent.account',
    'parent.action',
    'trx_id',
  ]) {
    assert.deepEqual(parseSearchQuery(`${field}:v`), t(`${field}:v`), field)
  }
})

test('status:executed is accepted and has no effect; other status values, negated or inside OR fail', () => {
  assert.deepEqual(parseSearchQuery('status:executed receiver:a'), t('receiver:a'))
  assert.deepEqual(parseSearchQuery('receiver:a status:executed action:b'), { and: [t('receiver:a'), t('action:b')] })
  const refused = (query: string, position: number, reason: RegExp) =>
    assert.throws(
      () => parseSearchQuery(query),
      (error: unknown) => {
        assert.ok(error instanceof AntlerError, String(error))
        assert.equal(error.code, 'request_validation_error')
        assert.ok(Array.isArray((error.details.errors as Record<string, unknown>).q), 'details.errors names q')
        assert.equal(error.status, 400)
        assert.equal(error.details.position, position, `${query}: ${error.message}`)
        assert.match(String(error.details.reason), reason)
        return true
      },
      query,
    )
  refused('status:executed', 0, /needs a term besides status:executed/)
  refused('receiver:a status:hard_fail', 11, /only status:executed/)
  refused('receiver:a -status:executed', 12, /cannot be negated or used inside OR/)
  refused('(status:executed OR receiver:a)', 1, /cannot be negated or used inside OR/)

  // Every other failure says where and why.
  refused('', 0, /empty/)
  refused('   ', 0, /empty/)
  refused('receiver', 8, /expected ':' after "receiver"/)
  refused('receiver:', 9, /expected a value after "receiver:"/)
  refused('receiver:"abc', 9, /unterminated double-quoted value/)
  refused("receiver:'abc", 9, /unterminated single-quoted value/)
  refused('receiver:a:b', 10, /unexpected ":" after a value/)
  refused('receiver:a"b"', 10, /unexpected "\\"" after a value/)
  refused('nonsense:a', 0, /the field "nonsense" is not indexed/)
  refused('data:a', 0, /not indexed/)
  refused('trx_idx:a', 0, /not indexed/)
  refused('input:yes', 0, /input takes true or false/)
  refused('notif:"true"', 0, /notif takes true or false/)
  refused('(receiver:a', 11, /expected '\)' to close the '\(' at position 0/)
  refused('receiver:a)', 10, /unbalanced '\)'/)
  refused('()', 1, /empty parentheses/)
  refused('receiver:a OR', 13, /ends where a term or \( is expected/)
  refused('OR receiver:a', 0, /expected a term or '\(' before OR/)
  refused('receiver:a OR OR action:b', 14, /expected a term or '\(' before OR/)
  refused('receiver:a AND', 14, /ends where a term/)
  refused('- receiver:a', 0, /'-' must be directly followed by a term or '\('/)
  refused('--receiver:a', 0, /'-' must be directly followed/)
  refused('@:a', 0, /unexpected "@"/)
  refused('receiver:a <', 11, /unexpected "<"/)
  refused(
    `receiver:${'a'.repeat(SEARCH_QUERY_LIMITS.maxLength)}`,
    SEARCH_QUERY_LIMITS.maxLength,
    /longer than 2048 characters/,
  )
  refused(
    Array.from({ length: SEARCH_QUERY_LIMITS.maxTerms + 1 }, (_, i) => `receiver:a${i}`).join(' '),
    0,
    /65 terms; at most 64/,
  )
  refused(
    `${'('.repeat(SEARCH_QUERY_LIMITS.maxDepth + 1)}receiver:a${')'.repeat(SEARCH_QUERY_LIMITS.maxDepth + 1)}`,
    SEARCH_QUERY_LIMITS.maxDepth,
    /nest deeper than 16/,
  )
  // At the limits exactly, queries parse.
  assert.ok(
    parseSearchQuery(
      `${'('.repeat(SEARCH_QUERY_LIMITS.maxDepth)}receiver:a${')'.repeat(SEARCH_QUERY_LIMITS.maxDepth)}`,
    ),
  )
  assert.ok(
    parseSearchQuery(Array.from({ length: SEARCH_QUERY_LIMITS.maxTerms }, (_, i) => `receiver:a${i}`).join(' ')),
  )
})

test('fuzz: thousands of random and mutated queries parse or fail with request_validation_error, quickly, never anything else', () => {
  const seed = Number(process.env.ANTLER_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
  const random = mulberry32(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]
  const pieces = [
    'receiver:',
    'data.to:',
    'auth:',
    'input:',
    'status:',
    'executed',
    'true',
    'alice',
    '"a b"',
    "'c'",
    '(',
    ')',
    ' ',
    ' OR ',
    ' AND ',
    '-',
    '&&',
    '||',
    ':',
    '"',
    "'",
    'é',
    '\u0000',
    '\n',
    '<',
    '!',
    'data.',
    '.',
    '@',
    'x'.repeat(50),
  ]
  const valid = [
    'receiver:a action:b',
    '(data.to:bob OR data.from:bob) -notif:true',
    'status:executed auth:alice@active',
    "data.memo:'x y' scheduled:false",
  ]
  let parsed = 0
  const started = Date.now()
  for (let i = 0; i < 5000; i++) {
    let query: string
    if (random() < 0.5) query = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pick(pieces)).join('')
    else {
      // A valid query with characters inserted, deleted or swapped.
      const chars = [...pick(valid)]
      for (let m = 0; m < 1 + Math.floor(random() * 3); m++) {
        const at = Math.floor(random() * (chars.length + 1))
        const op = random()
        if (op < 0.4) chars.splice(at, 0, pick(pieces))
        else if (op < 0.7) chars.splice(at, 1)
        else chars.splice(at, 1, pick(pieces))
      }
      query = chars.join('')
    }
    try {
      const expr = parseSearchQuery(query)
      assert.equal(typeof expr, 'object')
      parsed++
    } catch (error) {
      assert.ok(error instanceof AntlerError, `seed ${seed}: ${JSON.stringify(query)} threw ${String(error)}`)
      assert.equal(error.code, 'request_validation_error', `seed ${seed}: ${JSON.stringify(query)}`)
      assert.ok(
        Number.isInteger(error.details.position) &&
          (error.details.position as number) >= 0 &&
          (error.details.position as number) <= query.length,
        `seed ${seed}: position of ${JSON.stringify(query)}`,
      )
    }
  }
  assert.ok(parsed > 100, `seed ${seed}: some mutated queries still parse (${parsed})`)
  assert.ok(Date.now() - started < 5000, `seed ${seed}: 5,000 queries in under 5 s`)
})
