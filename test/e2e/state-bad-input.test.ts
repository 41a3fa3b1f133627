import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { PrivateKey } from '@wharfkit/antelope'
import { isStandardError, issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { assertNoLeak, expectError, parseJson, send, type Answer, type ErrorBody } from '../_helpers/http.ts'
import { mulberry32 } from '../_helpers/random.ts'

/**
 * Bad input at every REST state route of a real `antler dev` (docs/ARCHITECTURE.md, "Quality bars"; the routes' rules
 * are dfuse's, docs/API.md): every parameter missing, of the wrong type, empty, malformed, repeated or out of range;
 * lists over 1,500 names; primary keys that are not keys of their key_type; bodies that are not what the route reads;
 * and well-formed input that names nothing. Each answer is the standard error object with its status and code
 * (`details.errors` naming the parameter for validation problems), `X-Trace-Id` equal to `trace_id`, no stack trace,
 * and the server still serves. Then a seeded fuzz loop over the same routes. One platform for the whole file.
 */

const FORM = 'application/x-www-form-urlencoded'
/** The devchain's development key, which controls alice, bob, carol and the system accounts. */
const DEV_PUBLIC_KEY = 'EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV'

async function assertAlive(platform: Platform): Promise<void> {
  const answer = await send(`${platform.api}/healthz`)
  assert.equal(answer.status, 200, `the server still serves: ${answer.text}`)
}

// ---------------------------------------------------------------------------------------------
// Cases: one request and the answer it must get.

type Params = Record<string, string | readonly string[] | undefined>

/** A query string or form body: undefined values left out, arrays repeated (`a=1&a=2`). */
function encode(params: Params): string {
  const parts: string[] = []
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue
    for (const v of typeof value === 'string' ? [value] : value)
      parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(v)}`)
  }
  return parts.join('&')
}

interface Case {
  readonly name: string
  readonly method: 'GET' | 'POST'
  /** Path with its query string. */
  readonly path: string
  readonly body?: string | Buffer
  readonly contentType?: string
  readonly status: number
  readonly code: string
  /** For request_validation_error: the parameter `details.errors` must name (or `<param>.<index>`). */
  readonly param?: string
  /** Detail values the answer must carry. */
  readonly details?: Record<string, unknown>
}

/** A GET with these parameters, or a form POST of them. */
function paramsCase(
  method: 'GET' | 'POST',
  path: string,
  params: Params,
  expect: Pick<Case, 'status' | 'code' | 'param' | 'details'>,
  name: string,
): Case {
  const encoded = encode(params)
  return method === 'GET'
    ? { name: `GET ${path} ${name}`, method, path: `${path}?${encoded}`, ...expect }
    : { name: `POST ${path} (form) ${name}`, method, path, body: encoded, contentType: FORM, ...expect }
}

const invalidParam = (param: string) => ({ status: 400, code: 'request_validation_error', param })

/** Runs the cases eight at a time and returns one line per case answered wrongly. */
async function runCases(api: string, token: string, cases: readonly Case[]): Promise<string[]> {
  const failures: string[] = []
  let next = 0
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${token}` }
        if (c.contentType !== undefined) headers['content-type'] = c.contentType
        const answer = await send(`${api}${c.path}`, { method: c.method, headers, body: c.body })
        const body = expectError(answer, c.status, c.code)
        if (c.param !== undefined) {
          const errors = body.details?.errors as Record<string, unknown> | undefined
          assert.ok(errors && typeof errors === 'object', `details.errors in ${answer.text.slice(0, 300)}`)
          const named = Object.keys(errors).filter((key) => key === c.param || key.startsWith(`${c.param}.`))
          assert.ok(named.length > 0, `details.errors names ${c.param}: ${answer.text.slice(0, 300)}`)
          for (const key of named)
            assert.ok(
              Array.isArray(errors[key]) && (errors[key] as unknown[]).every((s) => typeof s === 'string'),
              `sentences for ${key}`,
            )
        }
        for (const [key, value] of Object.entries(c.details ?? {}))
          assert.deepEqual(body.details?.[key], value, `details.${key} of ${answer.text.slice(0, 300)}`)
      } catch (error) {
        failures.push(`${c.name.slice(0, 160)}: ${(error as Error).message.split('\n')[0]}`)
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return failures
}

// ---------------------------------------------------------------------------------------------
// The routes' parameters, and what is wrong for each kind.

interface RouteSpec {
  readonly path: string
  readonly methods: readonly ('GET' | 'POST')[]
  /** A parameter set the route answers 200 for. */
  readonly valid: Record<string, string>
  readonly required: readonly string[]
  readonly names: readonly string[]
  readonly scopes: readonly string[]
  readonly lists: readonly string[]
  readonly bools: readonly string[]
  readonly keyType: boolean
}

const READ_BOOLS = ['json', 'with_block_num', 'with_abi', 'irreversible_only']
const ROUTES: readonly RouteSpec[] = [
  {
    path: '/v0/state/table',
    methods: ['GET'],
    valid: { account: 'eosio.token', scope: 'alice', table: 'accounts' },
    required: ['account', 'scope', 'table'],
    names: ['account', 'table'],
    scopes: ['scope'],
    lists: [],
    bools: READ_BOOLS,
    keyType: true,
  },
  {
    path: '/v0/state/table/row',
    methods: ['GET'],
    valid: { account: 'eosio.token', scope: 'alice', table: 'accounts', primary_key: '........ehbo5' },
    required: ['account', 'scope', 'table', 'primary_key'],
    names: ['account', 'table'],
    scopes: ['scope'],
    lists: [],
    bools: READ_BOOLS,
    keyType: true,
  },
  {
    path: '/v0/state/tables/scopes',
    methods: ['GET', 'POST'],
    valid: { account: 'eosio.token', scopes: 'alice|bob', table: 'accounts' },
    required: ['account', 'scopes', 'table'],
    names: ['account', 'table'],
    scopes: [],
    lists: ['scopes'],
    bools: READ_BOOLS,
    keyType: true,
  },
  {
    path: '/v0/state/tables/accounts',
    methods: ['GET', 'POST'],
    valid: { accounts: 'eosio.token', scope: 'alice', table: 'accounts' },
    required: ['accounts', 'scope', 'table'],
    names: ['table'],
    scopes: ['scope'],
    lists: ['accounts'],
    bools: READ_BOOLS,
    keyType: true,
  },
  {
    path: '/v0/state/table_scopes',
    methods: ['GET'],
    valid: { account: 'eosio.token', table: 'accounts' },
    required: ['account', 'table'],
    names: ['account', 'table'],
    scopes: [],
    lists: [],
    bools: [],
    keyType: false,
  },
  {
    path: '/v0/state/abi',
    methods: ['GET'],
    valid: { account: 'eosio.token' },
    required: ['account'],
    names: ['account'],
    scopes: [],
    lists: [],
    bools: ['json'],
    keyType: false,
  },
  {
    path: '/v0/state/key_accounts',
    methods: ['GET', 'POST'],
    valid: { public_key: DEV_PUBLIC_KEY },
    required: ['public_key'],
    names: [],
    scopes: [],
    lists: [],
    bools: [],
    keyType: false,
  },
]

const BAD_NAMES = [
  '',
  'EOSIO',
  'Alice',
  'abcdefghijklmn',
  'abcdefghijklm',
  'a!b',
  'alice bob',
  'alice.',
  'ali_ce',
  'été',
  'a'.repeat(300),
  '6abc',
  'a\u0000b',
]
const BAD_SCOPES = [
  'Alice!',
  'abcdefghijklmn',
  'a'.repeat(21),
  '1,eos',
  '19,EOS',
  '4,',
  ',EOS',
  'EOSEOSEO',
  'a b',
  'été',
]
const BAD_BLOCK_NUMS = [
  '99999999999999999999',
  '4294967296',
  '-1',
  '1e3',
  '0x10',
  '1.5',
  '1.0',
  '',
  ' ',
  ' 1',
  '+5',
  'abc',
  'NaN',
  'Infinity',
  '٣',
  '1_000',
]
const BAD_BOOLS = ['truetrue', 'yes please', 'x'.repeat(100)]
const BAD_KEY_TYPES = ['octal', 'NAME', '', 'name ', 'hex_le', 'symbol-code', 'x'.repeat(100)]

/** Every parameter of a route, missing, empty, malformed, out of range and repeated. */
function parameterCases(spec: RouteSpec, method: 'GET' | 'POST', head: number): Case[] {
  const cases: Case[] = []
  const add = (params: Params, expect: Pick<Case, 'status' | 'code' | 'param' | 'details'>, name: string) =>
    cases.push(paramsCase(method, spec.path, params, expect, name))
  for (const param of spec.required) add({ ...spec.valid, [param]: undefined }, invalidParam(param), `without ${param}`)
  for (const param of spec.names)
    for (const bad of BAD_NAMES)
      add({ ...spec.valid, [param]: bad }, invalidParam(param), `${param}=${JSON.stringify(bad.slice(0, 20))}`)
  for (const param of spec.scopes)
    for (const bad of BAD_SCOPES)
      add({ ...spec.valid, [param]: bad }, invalidParam(param), `${param}=${JSON.stringify(bad)}`)
  for (const param of spec.lists) {
    // an empty scope is a scope; an empty account is not
    const empties = param === 'accounts' ? ['alice||bob', 'alice|', '|'] : []
    // Short names: a GET of 1,501 long ones would pass Node's 16 KiB header limit (431) before reaching the route.
    const over = Array.from({ length: 1501 }, (_, i) => `alice${'12345'[i % 5]}`).join('|')
    for (const bad of ['', 'alice|BOB!', 'alice|abcdefghijklmn', 'alice|a!b', ...empties, over])
      add(
        { ...spec.valid, [param]: bad },
        invalidParam(param),
        `${param}=${JSON.stringify(bad.slice(0, 30))} (${bad.split('|').length} names)`,
      )
    // Exactly 1,500 is allowed: the limit is the spec's, not one less.
    const limit = Array.from({ length: 1500 }, (_, i) => `alice${'12345'[i % 5]}`).join('|')
    add(
      { ...spec.valid, [param]: limit, block_num: String(head + 1_000_000) },
      { status: 400, code: 'app_block_num_higher_than_head_block_error' },
      `${param} with 1,500 names (accepted, then block_num above head)`,
    )
  }
  for (const bad of BAD_BLOCK_NUMS)
    add({ ...spec.valid, block_num: bad }, invalidParam('block_num'), `block_num=${JSON.stringify(bad)}`)
  for (const param of spec.bools)
    for (const bad of BAD_BOOLS)
      add({ ...spec.valid, [param]: bad }, invalidParam(param), `${param}=${JSON.stringify(bad.slice(0, 20))}`)
  if (spec.keyType)
    for (const bad of BAD_KEY_TYPES)
      add({ ...spec.valid, key_type: bad }, invalidParam('key_type'), `key_type=${JSON.stringify(bad.slice(0, 20))}`)
  // Repeated parameters: each one given twice (`account=a&account=b`), the valid value first.
  const repeatable = {
    ...spec.valid,
    block_num: '1',
    ...Object.fromEntries(spec.bools.map((b) => [b, 'true'])),
    ...(spec.keyType ? { key_type: 'name' } : {}),
  }
  for (const [param, value] of Object.entries(repeatable))
    add({ ...repeatable, [param]: [value, value === '1' ? '2' : 'eosio'] }, invalidParam(param), `${param} repeated`)
  return cases
}

/** `primary_key` values that are not keys of their key_type, and valid ones no row has. */
function primaryKeyCases(): Case[] {
  const invalid: Record<string, string[]> = {
    name: ['EOSIO!', 'abcdefghijklmn', 'alice bob', '4,eos', '19,EOS', 'eos.'],
    uint64: ['abc', '-1', '1e3', '0x10', '18446744073709551616', '1.5', ' 1', '........ehbo5'],
    hex: ['123', '0x0100000000000000', 'zz00000000000000', '01000000000000000', '454f53'],
    hex_be: ['xyz', '0x', '12345678901234567', '-1', '0xzz', '00 00'],
    symbol: ['EOS', '4,eos', '19,EOS', ',EOS', '4,', '4,EOSEOSEO', '4.EOS'],
    symbol_code: ['eos', 'EOSEOSEO', '4,EOS', 'E0S', 'EOS ', '........ehbo5'],
  }
  const absent: Record<string, string> = {
    name: 'nosuchrow',
    uint64: '123',
    hex: '0100000000000000',
    hex_be: '00000000000000ff',
    symbol: '4,XYZ',
    symbol_code: 'XYZ',
  }
  const base = { account: 'eosio.token', scope: 'alice', table: 'accounts' }
  const cases: Case[] = []
  for (const [keyType, values] of Object.entries(invalid)) {
    for (const bad of ['', ...values])
      cases.push(
        paramsCase(
          'GET',
          '/v0/state/table/row',
          { ...base, key_type: keyType, primary_key: bad },
          invalidParam('primary_key'),
          `primary_key=${JSON.stringify(bad)} as ${keyType}`,
        ),
      )
    cases.push(
      paramsCase(
        'GET',
        '/v0/state/table/row',
        { ...base, key_type: keyType, primary_key: absent[keyType] },
        { status: 400, code: 'data_row_not_found_error', details: { ...base, primary_key: absent[keyType] } },
        `absent ${keyType} key ${absent[keyType]}`,
      ),
    )
  }
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table/row',
      { ...base, primary_key: 'x'.repeat(65) },
      invalidParam('primary_key'),
      'primary_key of 65 characters',
    ),
  )
  return cases
}

function publicKeyCases(unknownKey: PrivateKey): Case[] {
  const bad = [
    '',
    'EOS',
    'EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CW',
    DEV_PUBLIC_KEY.toLowerCase(),
    `${DEV_PUBLIC_KEY}x`,
    'PUB_K1_xyz',
    'PUB_R1_',
    'PUB_WA_',
    'PUB_XX_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63',
    unknownKey.toWif(),
    unknownKey.toString(),
    'x'.repeat(257),
    '🦌',
  ]
  const cases: Case[] = []
  for (const method of ['GET', 'POST'] as const) {
    for (const value of bad)
      cases.push(
        paramsCase(
          method,
          '/v0/state/key_accounts',
          { public_key: value },
          invalidParam('public_key'),
          `public_key=${JSON.stringify(value.slice(0, 30))}`,
        ),
      )
    for (const form of [unknownKey.toPublic().toLegacyString(), unknownKey.toPublic().toString()]) {
      cases.push(
        paramsCase(
          method,
          '/v0/state/key_accounts',
          { public_key: form },
          {
            status: 400,
            code: 'data_public_key_not_found_error',
            details: { public_key: unknownKey.toPublic().toString() },
          },
          `unknown key ${form.slice(0, 12)}…`,
        ),
      )
    }
  }
  return cases
}

function byTimeCases(): Case[] {
  const path = '/v0/block_id/by_time'
  const valid = { time: '2020-01-01T00:00:00Z', comparator: 'gt' }
  const cases: Case[] = [
    paramsCase('GET', path, { comparator: 'gt' }, invalidParam('time'), 'without time'),
    paramsCase('GET', path, { time: valid.time }, invalidParam('comparator'), 'without comparator'),
  ]
  const badTimes = [
    '',
    'yesterday',
    'now',
    '1577836800',
    '2020-13-01T00:00:00Z',
    '2020-00-10T00:00:00Z',
    '2019-02-29T00:00:00Z',
    '2020-02-30T00:00:00Z',
    '2020-04-31T00:00:00Z',
    '2020-01-01T24:00:00Z',
    '2020-01-01T23:60:00Z',
    '2020-01-01T23:59:60Z',
    '2020-01-01 00:00:00Z',
    '2020-01-01',
    '2020-01-01T00:00:00+25:00',
    '2020-01-01T00:00:00.Z',
    '2020-01-01T00:00:00.1234567890Z',
    '+02020-01-01T00:00:00Z',
    'x'.repeat(65),
  ]
  for (const time of badTimes)
    cases.push(
      paramsCase('GET', path, { ...valid, time }, invalidParam('time'), `time=${JSON.stringify(time.slice(0, 40))}`),
    )
  for (const comparator of ['', 'GT', 'ne', 'gt ', 'greater', 'x'.repeat(100)])
    cases.push(
      paramsCase(
        'GET',
        path,
        { ...valid, comparator },
        invalidParam('comparator'),
        `comparator=${JSON.stringify(comparator.slice(0, 20))}`,
      ),
    )
  cases.push(
    paramsCase('GET', path, { ...valid, comparator: ['gt', 'lt'] }, invalidParam('comparator'), 'comparator repeated'),
  )
  cases.push(
    paramsCase('GET', path, { ...valid, time: [valid.time, valid.time] }, invalidParam('time'), 'time repeated'),
  )
  // Well-formed, but no block on that side of the time.
  for (const [time, comparator] of [
    ['2099-01-01T00:00:00Z', 'gt'],
    ['2099-01-01T00:00:00Z', 'gte'],
    ['2000-01-01T00:00:00Z', 'lt'],
    ['2000-01-01T00:00:00.5+02:00', 'lte'],
    ['2000-01-01T00:00:00Z', 'eq'],
  ]) {
    cases.push(
      paramsCase(
        'GET',
        path,
        { time, comparator },
        { status: 404, code: 'block_time_not_found', details: { time, comparator } },
        `${comparator} ${time}: nothing there`,
      ),
    )
  }
  return cases
}

const BIN = '/v0/state/abi/bin_to_json'
const jsonCase = (
  name: string,
  body: unknown,
  expect: Pick<Case, 'status' | 'code' | 'param' | 'details'>,
  contentType = 'application/json',
): Case => ({
  name: `POST ${BIN} ${name}`,
  method: 'POST',
  path: BIN,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  contentType,
  ...expect,
})

function binToJsonCases(head: number): Case[] {
  const valid = { account: 'eosio.token', table: 'accounts', hex_rows: ['809698000000000004454f5300000000'] }
  const cases: Case[] = [
    { name: `POST ${BIN} without a body`, method: 'POST', path: BIN, status: 400, code: 'missing_body_error' },
    jsonCase('empty body', '', { status: 400, code: 'missing_body_error' }),
    jsonCase('a body that is not JSON', '{"account":', { status: 400, code: 'invalid_json_error' }),
    jsonCase(
      'a form body (form Content-Type)',
      'account=eosio.token&table=accounts&hex_rows=00',
      { status: 400, code: 'invalid_json_error' },
      FORM,
    ),
    jsonCase(
      'garbage bytes',
      '\u0000\u00ff{{',
      { status: 400, code: 'invalid_json_error' },
      'application/octet-stream',
    ),
    jsonCase(
      'a body of 1.2 MB',
      { ...valid, hex_rows: ['00'.repeat(600_000)] },
      { status: 413, code: 'request_too_large_error' },
    ),
    jsonCase('{} (every field missing)', {}, invalidParam('hex_rows')),
  ]
  for (const body of ['null', '[]', '"x"', '42', 'true'])
    cases.push(jsonCase(`body ${body}`, body, invalidParam('body')))
  for (const field of ['account', 'table', 'hex_rows'])
    cases.push(jsonCase(`without ${field}`, { ...valid, [field]: undefined }, invalidParam(field)))
  const wrong: [string, unknown][] = [
    ['account', 123],
    ['account', ['eosio.token']],
    ['account', null],
    ['account', true],
    ['account', { name: 'eosio.token' }],
    ...BAD_NAMES.map((n): [string, unknown] => ['account', n]),
    ['table', true],
    ['table', ['accounts']],
    ...BAD_NAMES.map((n): [string, unknown] => ['table', n]),
    // hex_rows: not an array, odd length, not hex, wrong element types, too many rows
    ['hex_rows', '809698000000000004454f5300000000'],
    ['hex_rows', { 0: '00' }],
    ['hex_rows', null],
    ['hex_rows', ['8']],
    ['hex_rows', ['809']],
    ['hex_rows', ['zz']],
    ['hex_rows', ['0g']],
    ['hex_rows', ['00', ' 00']],
    ['hex_rows', ['0x00']],
    ['hex_rows', [12]],
    ['hex_rows', [null]],
    ['hex_rows', [['00']]],
    ['hex_rows', Array.from({ length: 10_001 }, () => '')],
    // block_num: strings that are not decimal, negatives, fractions, too big, other types
    ['block_num', '0x10'],
    ['block_num', '1e3'],
    ['block_num', '5'],
    ['block_num', -1],
    ['block_num', 1.5],
    ['block_num', 1e20],
    ['block_num', 4294967296],
    ['block_num', true],
    ['block_num', [5]],
    ['block_num', null],
    ['block_num', {}],
  ]
  for (const [field, value] of wrong)
    cases.push(
      jsonCase(`${field}=${JSON.stringify(value)?.slice(0, 40)}`, { ...valid, [field]: value }, invalidParam(field)),
    )
  // Well-formed, naming nothing or not decoding.
  cases.push(
    jsonCase(
      'an account without an ABI',
      { ...valid, account: 'alice' },
      { status: 400, code: 'data_abi_not_found_error', details: { account: 'alice' } },
    ),
  )
  cases.push(
    jsonCase(
      'a table not in the ABI',
      { ...valid, table: 'nosuch' },
      { status: 400, code: 'data_table_not_found_error', details: { account: 'eosio.token', table: 'nosuch' } },
    ),
  )
  for (const hex of ['', '00', '809698000000000004454f53000000', '809698000000000004454f5300000000ff']) {
    cases.push(
      jsonCase(
        `a row that does not decode (${JSON.stringify(hex)})`,
        { ...valid, hex_rows: [valid.hex_rows[0], hex] },
        { status: 400, code: 'data_decoding_table_row_error', details: { data: hex } },
      ),
    )
  }
  cases.push(
    jsonCase(
      'block_num above head',
      { ...valid, block_num: head + 1_000_000 },
      { status: 400, code: 'app_block_num_higher_than_head_block_error' },
    ),
  )
  return cases
}

/** A POST with a JSON, garbage or no body where a form is expected. */
function formBodyCases(spec: RouteSpec): Case[] {
  const json = JSON.stringify(spec.valid)
  const post = (
    name: string,
    body: string | Buffer | undefined,
    contentType: string | undefined,
    expect: Pick<Case, 'status' | 'code' | 'param' | 'details'>,
  ): Case => ({ name: `POST ${spec.path} ${name}`, method: 'POST', path: spec.path, body, contentType, ...expect })
  const unsupported = (contentType: string) => ({
    status: 415,
    code: 'unsupported_media_type_error',
    details: { content_type: contentType },
  })
  return [
    post('JSON body, application/json', json, 'application/json', unsupported('application/json')),
    post('JSON body, text/plain', json, 'text/plain', unsupported('text/plain')),
    post(
      'JSON body, application/json; charset=utf-8',
      json,
      'application/json; charset=utf-8',
      unsupported('application/json; charset=utf-8'),
    ),
    post(
      'garbage, application/octet-stream',
      randomBytes(64),
      'application/octet-stream',
      unsupported('application/octet-stream'),
    ),
    post('garbage, no Content-Type', randomBytes(64), undefined, unsupported('')),
    post(
      'multipart form',
      `--x\r\nContent-Disposition: form-data; name="${spec.required[0]}"\r\n\r\nalice\r\n--x--\r\n`,
      'multipart/form-data; boundary=x',
      unsupported('multipart/form-data; boundary=x'),
    ),
    post('JSON text as a form', json, FORM, invalidParam(spec.required[0])),
    post(
      'garbage bytes as a form',
      Buffer.from([0, 0xff, 0x25, 0x7a, 0x7a, 0x26, 0x3d, 0x3d, 0x26]),
      FORM,
      invalidParam(spec.required[0]),
    ),
    post('no body', undefined, undefined, invalidParam(spec.required[0])),
    post('empty form', '', FORM, invalidParam(spec.required[0])),
  ]
}

/**
 * POSTs a form that declares 1.1 MB but sends only its first 8 KB, and answers what the server says. Sending the
 * whole body would race the server's close: once it has refused from the Content-Length, unread bytes reset the
 * connection and may drop the answer before the client reads it.
 */
function declaredOversizedForm(api: string, token: string, spec: RouteSpec): Promise<Answer> {
  const head = `${encode(spec.valid)}&pad=`
  const declared = 1_100_000
  return new Promise((resolve, reject) => {
    const req = request(`${api}${spec.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': FORM, 'content-length': declared },
      timeout: 10_000,
    })
    req.on('response', async (response) => {
      const chunks: Buffer[] = []
      for await (const chunk of response) chunks.push(chunk as Buffer)
      const text = Buffer.concat(chunks).toString('utf8')
      req.destroy()
      const headers = new Headers()
      for (const [name, value] of Object.entries(response.headers))
        if (typeof value === 'string') headers.set(name, value)
      resolve({ status: response.statusCode ?? 0, headers, text, body: parseJson(text) })
    })
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')))
    req.on('error', reject)
    req.write(head + 'x'.repeat(8 * 1024 - head.length))
  })
}

/** Well-formed reads that name nothing, or a height the store cannot answer. */
function nothingThereCases(head: number, lib: number): Case[] {
  const above = String(head + 1_000_000)
  // Between LIB and head at the time of writing: LIB moves on, but lags the head by about 12 blocks.
  const reversible = String(head)
  const cases: Case[] = []
  const higherThanHead = {
    status: 400,
    code: 'app_block_num_higher_than_head_block_error',
    details: { request_block_num: Number(above) },
  }
  const higherThanLib = {
    status: 400,
    code: 'app_block_num_higher_than_lib_error',
    details: { request_block_num: head },
  }
  const max = {
    status: 400,
    code: 'app_block_num_higher_than_head_block_error',
    details: { request_block_num: 4294967295 },
  }
  for (const spec of ROUTES) {
    for (const method of spec.methods) {
      cases.push(
        paramsCase(method, spec.path, { ...spec.valid, block_num: above }, higherThanHead, 'block_num above head'),
      )
      cases.push(paramsCase(method, spec.path, { ...spec.valid, block_num: '4294967295' }, max, 'block_num 2^32-1'))
      cases.push(
        paramsCase(
          method,
          spec.path,
          { ...spec.valid, block_num: '0000000004294967295' },
          max,
          'block_num 2^32-1 with leading zeros',
        ),
      )
      if (spec.bools.includes('irreversible_only')) {
        assert.ok(head > lib, `head ${head} above LIB ${lib}`)
        cases.push(
          paramsCase(
            method,
            spec.path,
            { ...spec.valid, block_num: reversible, irreversible_only: 'true' },
            higherThanLib,
            'block_num above LIB with irreversible_only',
          ),
        )
        cases.push(
          paramsCase(
            method,
            spec.path,
            { ...spec.valid, block_num: above, irreversible_only: '1' },
            higherThanHead,
            'block_num above head with irreversible_only',
          ),
        )
      }
    }
  }
  const noAbi = { status: 400, code: 'data_abi_not_found_error', details: { account: 'alice' } }
  const noTable = {
    status: 400,
    code: 'data_table_not_found_error',
    details: { account: 'eosio.token', table: 'nosuch' },
  }
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table',
      { account: 'alice', scope: 'alice', table: 'accounts', json: 'true' },
      noAbi,
      'json from an account without an ABI',
    ),
  )
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table',
      { account: 'eosio.token', scope: 'alice', table: 'nosuch', json: 'true' },
      noTable,
      'json from a table not in the ABI',
    ),
  )
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table/row',
      { account: 'alice', scope: 'alice', table: 'accounts', primary_key: 'EOS', json: 'true' },
      noAbi,
      'json from an account without an ABI',
    ),
  )
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table/row',
      { account: 'eosio.token', scope: 'alice', table: 'nosuch', primary_key: 'EOS', json: 'true' },
      noTable,
      'json from a table not in the ABI',
    ),
  )
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table/row',
      { account: 'eosio.token', scope: 'nobody', table: 'accounts', primary_key: 'EOS' },
      { status: 400, code: 'data_row_not_found_error', details: { scope: 'nobody', primary_key: 'EOS' } },
      'a row in a scope without rows',
    ),
  )
  for (const method of ['GET', 'POST'] as const) {
    cases.push(
      paramsCase(
        method,
        '/v0/state/tables/scopes',
        { account: 'alice', scopes: 'alice|bob', table: 'accounts', json: 'true' },
        noAbi,
        'json from an account without an ABI',
      ),
    )
    cases.push(
      paramsCase(
        method,
        '/v0/state/tables/scopes',
        { account: 'eosio.token', scopes: 'alice|bob', table: 'nosuch', json: 'true' },
        noTable,
        'json from a table not in the ABI',
      ),
    )
    cases.push(
      paramsCase(
        method,
        '/v0/state/tables/accounts',
        { accounts: 'eosio.token|alice', scope: 'alice', table: 'accounts', json: 'true' },
        noAbi,
        'json with an account without an ABI',
      ),
    )
    cases.push(
      paramsCase(
        method,
        '/v0/state/tables/accounts',
        { accounts: 'eosio.token', scope: 'alice', table: 'nosuch', json: 'true' },
        noTable,
        'json from a table not in the ABI',
      ),
    )
  }
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table_scopes',
      { account: 'eosio.token', table: 'nosuch' },
      noTable,
      'a table that never held a row',
    ),
  )
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/table_scopes',
      { account: 'nobody', table: 'accounts' },
      { status: 400, code: 'data_table_not_found_error', details: { account: 'nobody', table: 'accounts' } },
      'an account without tables',
    ),
  )
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/abi',
      { account: 'nobody' },
      { status: 400, code: 'data_abi_not_found_error', details: { account: 'nobody' } },
      'an account without an ABI',
    ),
  )
  cases.push(
    paramsCase(
      'GET',
      '/v0/state/abi',
      { account: 'eosio.token', block_num: '1' },
      { status: 400, code: 'data_abi_not_found_error', details: { account: 'eosio.token', block_num: 1 } },
      'before the setabi',
    ),
  )
  return cases
}

// ---------------------------------------------------------------------------------------------
// The fuzz loop's generators: a seeded PRNG so a failure reproduces with ANTLER_FUZZ_SEED.

class Fuzz {
  constructor(private readonly random: () => number) {}
  int(n: number): number {
    return Math.floor(this.random() * n)
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]
  }
  string(max: number): string {
    const alphabets = [
      'abcxyz12345.',
      'ABCEOSZ,0123456789',
      '|&=%+?#;/ \t\n',
      '\u0000\u0001\u007f\u00ff\u2028\ud83e\udd8c\ud800',
      'eosio.token',
      '{}[]":,\\',
    ]
    let out = ''
    const length = this.int(max)
    for (let i = 0; i < length; i++) out += this.pick([...this.pick(alphabets)])
    return out
  }
  /** A parameter value: a valid one mutated, a random string, an edge case. */
  paramValue(valid: string): string {
    switch (this.int(6)) {
      case 0:
        return this.string(30)
      case 1: {
        const chars = [...valid]
        for (let i = 0, n = 1 + this.int(3); i < n; i++) {
          const at = this.int(chars.length + 1)
          const op = this.int(3)
          if (op === 0) chars.splice(at, 1)
          else if (op === 1) chars.splice(at, 0, this.string(2))
          else chars[at % Math.max(1, chars.length)] = this.string(2)
        }
        return chars.join('')
      }
      case 2:
        return this.pick([
          '',
          '0',
          '1',
          'true',
          '-0',
          '4294967295',
          '4294967296',
          '18446744073709551615',
          '18446744073709551616',
          '1e309',
          '0x',
          'null',
          '[]',
          '%',
          '%zz',
          '..',
          '.',
          '|',
          '||',
          'EOS',
          '4,EOS',
          '18,ZZZZZZZ',
          '255,A',
        ])
      case 3:
        return 'a'.repeat(this.pick([13, 14, 20, 21, 64, 65, 256, 257, 2000]))
      case 4:
        return Array.from({ length: this.pick([2, 1500, 1501]) }, () =>
          this.pick(['alice', 'bob', 'EOS', '', 'A!']),
        ).join('|')
      default:
        return valid
    }
  }
}

const FUZZ_ROUTES: readonly {
  path: string
  methods: readonly ('GET' | 'POST')[]
  valid: Record<string, string>
  extra: readonly string[]
}[] = [
  ...ROUTES.map((r) => ({
    path: r.path,
    methods: r.methods,
    valid: r.valid,
    extra: ['block_num', ...r.bools, ...(r.keyType ? ['key_type'] : [])],
  })),
  {
    path: '/v0/block_id/by_time',
    methods: ['GET'],
    valid: { time: '2020-01-01T00:00:00Z', comparator: 'gt' },
    extra: [],
  },
]

/** A random request at one of the state routes: mutated parameters, repeated or unknown ones, or a random body. */
function fuzzRequest(
  fuzz: Fuzz,
  i: number,
): { i: number; method: string; path: string; headers: Record<string, string>; body?: string | Buffer } {
  if (fuzz.int(6) === 0) {
    // bin_to_json: a JSON value, mutated JSON or random bytes, under any Content-Type
    const valid = JSON.stringify({
      account: 'eosio.token',
      table: 'accounts',
      hex_rows: ['809698000000000004454f5300000000'],
      block_num: 1,
    })
    const values: unknown[] = [null, true, -1, 1.5, 2 ** 64, 'x', [], {}, ['00'], ['zz'], '00', { a: 1 }, 'eosio.token']
    const field = fuzz.pick(['account', 'table', 'hex_rows', 'block_num', '__proto__', 'constructor', 'x'])
    const body = fuzz.pick([
      () => JSON.stringify({ ...JSON.parse(valid), [field]: fuzz.pick(values) }),
      () => {
        const bytes = [...Buffer.from(valid)]
        for (let k = 0, n = 1 + fuzz.int(4); k < n; k++) bytes[fuzz.int(bytes.length)] = fuzz.int(256)
        return Buffer.from(bytes)
      },
      () => Buffer.from(Array.from({ length: fuzz.int(512) }, () => fuzz.int(256))),
      () => fuzz.string(100),
      () => valid,
    ])()
    const contentType = fuzz.pick([
      undefined,
      'application/json',
      'text/plain',
      FORM,
      'application/octet-stream',
      ';;;',
    ])
    return {
      i,
      method: fuzz.int(10) === 0 ? 'GET' : 'POST',
      path: BIN,
      headers: contentType ? { 'content-type': contentType } : {},
      body,
    }
  }
  const route = fuzz.pick(FUZZ_ROUTES)
  const parts: [string, string][] = Object.entries(route.valid).map(([k, v]) => [k, v])
  for (let k = 0, n = 1 + fuzz.int(3); k < n; k++) {
    const op = fuzz.int(5)
    if (op === 0 && parts.length > 0) parts.splice(fuzz.int(parts.length), 1)
    else if (op === 1 && parts.length > 0) {
      const at = fuzz.int(parts.length)
      parts[at] = [parts[at][0], fuzz.paramValue(parts[at][1])]
    } else if (op === 2 && parts.length > 0) parts.push([...fuzz.pick(parts)])
    else if (op === 3 && route.extra.length > 0)
      parts.push([fuzz.pick(route.extra), fuzz.paramValue(fuzz.pick(['0', '1', 'true', 'name', 'hex']))])
    else parts.push([fuzz.string(8), fuzz.string(20)])
  }
  // Mostly encoded properly; sometimes raw, so that `&`, `=`, `%` and `+` land where they will.
  const raw = fuzz.int(4) === 0
  // Buffer.from makes lone surrogates U+FFFD, which encodeURIComponent would refuse.
  const wellFormed = (text: string) => Buffer.from(text).toString()
  const encoded = parts
    .map(([k, v]) =>
      raw
        ? wellFormed(`${k}=${v}`)
            .replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c))
            .replace(/#/g, '%23')
        : `${encodeURIComponent(wellFormed(k))}=${encodeURIComponent(wellFormed(v))}`,
    )
    .join('&')
  const method = fuzz.pick(route.methods)
  if (method === 'GET') return { i, method, path: `${route.path}?${encoded}`, headers: {} }
  const contentType = fuzz.pick([
    FORM,
    FORM,
    FORM,
    `${FORM}; charset=utf-8`,
    'application/json',
    'text/plain',
    undefined,
  ])
  const body = fuzz.int(5) === 0 ? Buffer.from(Array.from({ length: fuzz.int(256) }, () => fuzz.int(256))) : encoded
  return {
    i,
    method,
    path: fuzz.int(4) === 0 ? `${route.path}?${encoded}` : route.path,
    headers: contentType ? { 'content-type': contentType } : {},
    body,
  }
}

// ---------------------------------------------------------------------------------------------

test('bad input at every REST state route gets the standard error object with its status and code, never a crash, a hang or a stack', async (t: TestContext) => {
  // LIB 300 blocks (30 s) behind head: a read at head with irreversible_only stays above LIB for the whole file.
  const platform = await startPlatform(t, ['--lib-depth', '300'])
  const { api } = platform
  const token = await issueToken(platform, platform.apiKey)
  const get = (path: string) => send(`${api}${path}`, { headers: { authorization: `Bearer ${token}` } })

  // A few blocks, with LIB behind head, so that reads above LIB exist.
  let head = 0
  let lib = 0
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const health = (await (
      await send(`${api}/healthz`)
    ).body) as { head_block_num: number | null; last_irreversible_block_num: number | null }
    head = health.head_block_num ?? 0
    lib = health.last_irreversible_block_num ?? 0
    if (head >= 10 && head > lib) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.ok(head >= 10 && head > lib, `head ${head}, LIB ${lib}`)

  await t.test('each route answers 200 for its valid parameters (the cases below change one thing)', async () => {
    for (const spec of ROUTES) {
      for (const method of spec.methods) {
        const answer =
          method === 'GET'
            ? await get(`${spec.path}?${encode(spec.valid)}`)
            : await send(`${api}${spec.path}`, {
                method,
                headers: { authorization: `Bearer ${token}`, 'content-type': FORM },
                body: encode(spec.valid),
              })
        assert.equal(answer.status, 200, `${method} ${spec.path}: ${answer.text.slice(0, 300)}`)
      }
    }
    // The form POSTs take a charset parameter; bin_to_json reads JSON whatever the Content-Type, a form one included
    // (curl -d).
    const charset = await send(`${api}/v0/state/tables/scopes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `${FORM}; charset=UTF-8` },
      body: 'account=eosio.token&scopes=alice&table=accounts',
    })
    assert.equal(charset.status, 200, charset.text)
    for (const contentType of [undefined, 'application/json', 'text/plain;charset=UTF-8', FORM]) {
      const answer = await send(`${api}${BIN}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...(contentType ? { 'content-type': contentType } : {}) },
        body: Buffer.from(
          JSON.stringify({ account: 'eosio.token', table: 'accounts', hex_rows: ['809698000000000004454f5300000000'] }),
        ),
      })
      assert.equal(answer.status, 200, `bin_to_json with Content-Type ${contentType}: ${answer.text}`)
      assert.deepEqual((answer.body as { rows: unknown[] }).rows, [{ balance: '1000.0000 EOS' }])
    }
    const time = await get('/v0/block_id/by_time?time=2020-01-01T00:00:00Z&comparator=gt')
    assert.equal(time.status, 200, time.text)
  })

  await t.test(
    'every parameter of every route: missing, empty, malformed, out of range, repeated; lists of 1,501 names',
    async () => {
      const cases = ROUTES.flatMap((spec) => spec.methods.flatMap((method) => parameterCases(spec, method, head)))
      const failures = await runCases(api, token, cases)
      assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases`)
      await assertAlive(platform)
    },
  )

  await t.test('primary_key that is not a key of its key_type, for each key_type; valid keys no row has', async () => {
    const failures = await runCases(api, token, primaryKeyCases())
    assert.deepEqual(failures, [])
  })

  await t.test(
    'public keys: malformed, wrong checksum, private keys, too long; a valid key no account holds',
    async () => {
      const failures = await runCases(api, token, publicKeyCases(PrivateKey.generate('K1')))
      assert.deepEqual(failures, [])
    },
  )

  await t.test('block_id/by_time: bad and impossible times, bad comparators, nothing on that side', async () => {
    const failures = await runCases(api, token, byTimeCases())
    assert.deepEqual(failures, [])
  })

  await t.test(
    'abi/bin_to_json: missing and malformed bodies, hex that is odd, not hex or not an array, too many rows, wrong types, rows that do not decode',
    async () => {
      const failures = await runCases(api, token, binToJsonCases(head))
      assert.deepEqual(failures, [])
    },
  )

  await t.test('form POSTs: JSON, garbage, multipart and no bodies where a form is expected', async () => {
    const posts = ROUTES.filter((r) => r.methods.includes('POST'))
    const failures = await runCases(api, token, posts.flatMap(formBodyCases))
    assert.deepEqual(failures, [])
    for (const spec of posts) expectError(await declaredOversizedForm(api, token, spec), 413, 'request_too_large_error')
  })

  await t.test(
    'well-formed input that names nothing: no ABI, no table, no row, above head, above LIB with irreversible_only',
    async () => {
      const health = (await (
        await send(`${api}/healthz`)
      ).body) as { head_block_num: number; last_irreversible_block_num: number }
      const failures = await runCases(
        api,
        token,
        nothingThereCases(health.head_block_num, health.last_irreversible_block_num),
      )
      assert.deepEqual(failures, [])
    },
  )

  await t.test('every route needs a token', async () => {
    for (const spec of [
      ...ROUTES,
      {
        path: '/v0/block_id/by_time',
        methods: ['GET'] as const,
        valid: { time: '2020-01-01T00:00:00Z', comparator: 'gt' },
      },
    ]) {
      for (const method of spec.methods) {
        const answer = await send(
          `${api}${spec.path}${method === 'GET' ? `?${encode(spec.valid)}` : ''}`,
          method === 'GET' ? {} : { method, headers: { 'content-type': FORM }, body: encode(spec.valid) },
        )
        expectError(answer, 401, 'auth_invalid_token_error')
      }
    }
    expectError(await send(`${api}${BIN}`, { method: 'POST', body: '{}' }), 401, 'auth_invalid_token_error')
  })

  await t.test('wrong methods are 405 with Allow', async () => {
    for (const [method, path, allow] of [
      ['POST', '/v0/state/table', 'GET'],
      ['DELETE', '/v0/state/tables/scopes', 'GET, POST'],
      ['GET', BIN, 'POST'],
      ['PUT', '/v0/block_id/by_time', 'GET'],
    ] as const) {
      const answer = await send(`${api}${path}`, { method, headers: { authorization: `Bearer ${token}` } })
      expectError(answer, 405, 'method_not_allowed_error')
      assert.equal(answer.headers.get('allow'), allow, `${method} ${path}`)
    }
  })

  await t.test(
    'fuzz: random and mutated query strings, form bodies and JSON bodies across the state routes',
    async (st) => {
      const seed = Number(process.env.ANTLER_FUZZ_SEED ?? randomBytes(4).readUInt32LE(0))
      st.diagnostic(`fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
      console.log(`state-bad-input fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
      const fuzz = new Fuzz(mulberry32(seed))
      const requests = Array.from({ length: 400 }, (_, i) => fuzzRequest(fuzz, i))
      let next = 0
      const failures: string[] = []
      const seen = new Map<string, number>()
      const worker = async () => {
        while (next < requests.length) {
          const request = requests[next++]
          const body = JSON.stringify(String(request.body ?? '').slice(0, 80))
          const what = `#${request.i} ${request.method} ${request.path.slice(0, 120)} ${JSON.stringify(request.headers)} body ${body}`
          let answer: Answer
          try {
            answer = await send(`${api}${request.path}`, {
              method: request.method,
              headers: { authorization: `Bearer ${token}`, ...request.headers },
              body: request.method === 'GET' ? undefined : request.body,
            })
          } catch (error) {
            failures.push(`${what}: no answer (${(error as Error).message})`)
            continue
          }
          const outcome = `${answer.status} ${(answer.body as { code?: unknown } | undefined)?.code ?? ''}`
          seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
          try {
            assertNoLeak(answer.text)
            if (answer.status === 200) {
              assert.ok(
                answer.body !== undefined && !isStandardError(answer.body),
                `a 200 with a JSON answer: ${answer.text.slice(0, 200)}`,
              )
              continue
            }
            assert.ok(
              answer.status >= 400 && answer.status < 500,
              `a 4xx, not ${answer.status}: ${answer.text.slice(0, 300)}`,
            )
            expectError(answer, answer.status, (answer.body as ErrorBody | undefined)?.code ?? '?')
          } catch (error) {
            failures.push(`${what}: ${(error as Error).message.split('\n')[0]}`)
          }
        }
      }
      await Promise.all(Array.from({ length: 8 }, worker))
      st.diagnostic(`answers: ${[...seen].map(([outcome, n]) => `${outcome} ×${n}`).join(', ')}`)
      assert.deepEqual(failures, [], `seed ${seed}: ${failures.length} bad answers`)
      await assertAlive(platform)
    },
  )

  assert.equal(platform.cli.child.exitCode, null, 'the platform is still running')
  await assertAlive(platform)
  // Every failure above was answered on purpose: none reached the catch-all, which logs "unexpected error".
  assert.doesNotMatch(platform.cli.stderr(), /unexpected error/, 'no unexpected_error in the log')
})
