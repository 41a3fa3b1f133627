import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SHIP_ABI_TEXT, checkShipAbi, shipAbiProblems } from '../../src/ship/index.ts'

interface AbiJson {
  structs: { name: string; base?: string; fields: { name: string; type: string }[] }[]
  variants: { name: string; types: string[] }[]
  types: { new_type_name: string; type: string }[]
  tables: { name: string; type: string; key_names: string[] }[]
}

const spring = (): AbiJson => JSON.parse(SHIP_ABI_TEXT) as AbiJson
const variant = (abi: AbiJson, name: string) => abi.variants.find((v) => v.name === name)!
const struct = (abi: AbiJson, name: string) => abi.structs.find((s) => s.name === name)!

/** Spring's ABI as Leap 3–5 sent it: no v1 requests/results, no finality or header-extension types. */
function leap5(): AbiJson {
  const abi = spring()
  variant(abi, 'request').types.splice(3)
  variant(abi, 'result').types.splice(2)
  const springOnly = new Set([
    'get_blocks_request_v1',
    'get_status_request_v1',
    'get_blocks_result_v1',
    'get_status_result_v1',
    'finality_data',
    'finalizer_policy_with_string_key',
    'finalizer_authority_with_string_key',
    'finality_extension',
    'qc_claim',
    'finalizer_policy_diff',
    'proposer_policy_diff',
    'insert_finalizer_policy_index_pair',
    'insert_proposer_policy_index_pair',
    'finalizer_authority',
    'protocol_feature_activation_extension',
    'producer_schedule_change_extension',
  ])
  abi.structs = abi.structs.filter((s) => !springOnly.has(s.name))
  abi.variants = abi.variants.filter((v) => v.name !== 'block_header_extension')
  return abi
}

/** EOSIO 2.0: no action_trace_v1, no chain_id in the status. */
function eosio20(): AbiJson {
  const abi = leap5()
  variant(abi, 'action_trace').types.splice(1)
  abi.structs = abi.structs.filter((s) => s.name !== 'action_trace_v1')
  struct(abi, 'get_status_result_v0').fields.pop()
  return abi
}

test('the guard accepts the ABIs of Spring 1.x, Leap 3–5 and EOSIO 2.0', () => {
  for (const [name, abi] of [
    ['spring', spring()],
    ['leap5', leap5()],
    ['eosio 2.0', eosio20()],
  ] as const)
    assert.deepEqual(shipAbiProblems(abi), { problems: [], types: [] }, name)
})

test('the guard accepts Spring 2.0-dev chain_config_v2 / global_property rows: no decoder reads them', () => {
  const abi = spring()
  variant(abi, 'chain_config').types.push('chain_config_v2')
  abi.structs.push({
    name: 'chain_config_v2',
    fields: [
      ...struct(abi, 'chain_config_v1').fields,
      { name: 'max_sync_call_depth', type: 'uint32' },
      { name: 'max_sync_call_data_size', type: 'uint32' },
    ],
  })
  assert.doesNotThrow(() => checkShipAbi(abi))
})

/** [what, mutation, the type the error must name] */
const REFUSED: [string, (abi: AbiJson) => void, string][] = [
  [
    'a new action_trace variant (action_trace_v2, Spring 2.0-dev)',
    (abi) => {
      variant(abi, 'action_trace').types.push('action_trace_v2')
      abi.structs.push({
        name: 'action_trace_v2',
        fields: [...struct(abi, 'action_trace_v1').fields, { name: 'call_traces', type: 'bytes' }],
      })
    },
    'action_trace_v2',
  ],
  [
    'a transaction_trace_v1',
    (abi) => variant(abi, 'transaction_trace').types.push('transaction_trace_v1'),
    'transaction_trace_v1',
  ],
  ['a table_delta_v1 (EOSIO 2.1)', (abi) => variant(abi, 'table_delta').types.push('table_delta_v1'), 'table_delta_v1'],
  [
    'a changed field type in action_trace_v1',
    (abi) => (struct(abi, 'action_trace_v1').fields.at(-1)!.type = 'string'),
    'action_trace_v1',
  ],
  [
    'an added field in a struct the decoders read (action_receipt_v0)',
    (abi) => struct(abi, 'action_receipt_v0').fields.push({ name: 'extra', type: 'uint8' }),
    'action_receipt_v0',
  ],
  ['a contract_row_v1', (abi) => variant(abi, 'contract_row').types.push('contract_row_v1'), 'contract_row_v1'],
  [
    'a renamed delta table (EOSIO 2.1 short names)',
    (abi) => (abi.tables.find((t) => t.name === 'contract_row')!.name = 'contractrow'),
    'contract_row',
  ],
  ['a reordered variant', (abi) => variant(abi, 'action_trace').types.reverse(), 'action_trace_v1'],
  ['a changed block header', (abi) => struct(abi, 'block_header').fields.splice(2, 1), 'block_header'],
  ['a changed finality_data layout', (abi) => struct(abi, 'finality_data').fields.splice(4, 1), 'finality_data'],
  [
    'a changed get_blocks_result_v0',
    (abi) => struct(abi, 'get_blocks_result_v0').fields.push({ name: 'extra', type: 'bytes?' }),
    'get_blocks_result_v0',
  ],
]

for (const [what, mutate, type] of REFUSED) {
  test(`the guard refuses ${what} with ship_protocol_error naming ${type}`, () => {
    const abi = spring()
    mutate(abi)
    assert.throws(
      () => checkShipAbi(abi),
      (e: { code?: string; message: string; details?: { types?: string[] } }) =>
        e.code === 'ship_protocol_error' &&
        (e.details?.types ?? []).includes(type) &&
        e.message.includes(type) &&
        !e.message.includes('\n'),
    )
  })
}
