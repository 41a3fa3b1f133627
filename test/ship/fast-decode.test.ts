import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Serializer, Signature } from '@wharfkit/antelope'
import { fromHex } from '../../src/antelope/index.ts'
import { Chain, bootChain, pushSigned, keyAuthority } from '../../src/devchain/index.ts'
import {
  decodeAccountRow,
  decodeContractRow,
  decodeGeneratedTransactionRow,
  decodePermissionLinkRow,
  decodePermissionRow,
  decodeShipType,
  decodeTableDeltas,
  decodeTransactionTraces,
  encodeShipType,
  type TransactionTraceValue,
} from '../../src/ship/index.ts'

type Json = Record<string, unknown>
type V<T> = [string, T]

/** The fast decoder's output in the shape of wharfkit's objectified decode, for a field-by-field comparison. */
function asReference(t: TransactionTraceValue): Json {
  return {
    id: t.id,
    status: t.status,
    cpu_usage_us: t.cpuUsageUs,
    net_usage_words: t.netUsageWords,
    scheduled: t.scheduled,
    except: t.except ?? null,
    failed: t.failedDtrxTrace ? asReference(t.failedDtrxTrace) : null,
    action_traces: t.actionTraces.map((a) => ({
      action_ordinal: a.actionOrdinal,
      creator_action_ordinal: a.creatorActionOrdinal,
      receipt: a.receipt
        ? {
            receiver: a.receipt.receiver,
            act_digest: a.receipt.actDigest,
            global_sequence: String(a.receipt.globalSequence),
            recv_sequence: String(a.receipt.recvSequence),
            auth_sequence: a.receipt.authSequence.map(([n, s]) => [n, String(s)]),
            code_sequence: a.receipt.codeSequence,
            abi_sequence: a.receipt.abiSequence,
          }
        : null,
      receiver: a.receiver,
      act: {
        account: a.act.account,
        name: a.act.name,
        authorization: a.act.authorization,
        data: Buffer.from(a.act.data).toString('hex'),
      },
      context_free: a.contextFree,
      account_ram_deltas: a.accountRamDeltas.map((d) => ({ account: d.account, delta: String(d.delta) })),
      except: a.except ?? null,
      return_value: Buffer.from(a.returnValue).toString('hex'),
      elapsed: String(a.elapsed),
      console: Buffer.from(a.console).toString('utf8'),
    })),
    elapsed: String(t.elapsed),
    net_usage: String(t.netUsage),
    partial: t.partial
      ? {
          expiration: new Date(t.partial.expiration * 1000).toISOString().slice(0, 19),
          ref_block_num: t.partial.refBlockNum,
          ref_block_prefix: t.partial.refBlockPrefix,
          max_net_usage_words: t.partial.maxNetUsageWords,
          max_cpu_usage_ms: t.partial.maxCpuUsageMs,
          delay_sec: t.partial.delaySec,
          transaction_extensions: t.partial.transactionExtensions.map((e) => ({
            type: e.type,
            data: Buffer.from(e.data).toString('hex'),
          })),
          signatures: t.partial.signatures.map((sig) => Serializer.decode({ data: sig, type: Signature }).toString()),
          context_free_data: t.partial.contextFreeData.map((d) => Buffer.from(d).toString('hex')),
        }
      : null,
  }
}

function referenceOf(t: Json): Json {
  const traces = (t.action_traces as V<Json>[]).map(([version, a]) => {
    const receipt = a.receipt as V<Json> | null
    return {
      action_ordinal: a.action_ordinal,
      creator_action_ordinal: a.creator_action_ordinal,
      receipt: receipt
        ? {
            ...receipt[1],
            global_sequence: String(receipt[1].global_sequence),
            recv_sequence: String(receipt[1].recv_sequence),
            auth_sequence: (receipt[1].auth_sequence as { account: string; sequence: string | number }[]).map((x) => [
              x.account,
              String(x.sequence),
            ]),
          }
        : null,
      receiver: a.receiver,
      act: a.act,
      context_free: a.context_free,
      account_ram_deltas: (a.account_ram_deltas as { account: string; delta: string | number }[]).map((d) => ({
        account: d.account,
        delta: String(d.delta),
      })),
      except: a.except ?? null,
      return_value: version === 'action_trace_v1' ? a.return_value : '',
      elapsed: String(a.elapsed),
      console: a.console,
    }
  })
  const failed = t.failed_dtrx_trace as V<Json> | null
  const partial = t.partial as V<Json> | null
  return {
    id: t.id,
    status: t.status,
    cpu_usage_us: t.cpu_usage_us,
    net_usage_words: t.net_usage_words,
    scheduled: t.scheduled,
    except: t.except ?? null,
    failed: failed ? referenceOf(failed[1]) : null,
    action_traces: traces,
    elapsed: String(t.elapsed),
    net_usage: String(t.net_usage),
    partial: partial ? partial[1] : null,
  }
}

function compareTraces(bytes: Uint8Array): number {
  const ours = decodeTransactionTraces(bytes).map(asReference)
  const theirs = decodeShipType<V<Json>[]>('transaction_trace[]', bytes).map(([, t]) => referenceOf(t))
  assert.deepEqual(ours, theirs)
  return ours.length
}

test('decodeTransactionTraces() and the row decoders agree with wharfkit on every devchain block', () => {
  let now = Date.parse('2030-01-01T00:00:00Z')
  const chain = new Chain({ dataDir: undefined, producers: 3, libDepth: 12, now: () => now })
  bootChain(chain)
  const rawdb = [{ actor: 'rawdb', permission: 'active' }]
  pushSigned(chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'x' },
    },
  ])
  pushSigned(chain, [
    { account: 'rawdb', name: 'notify', authorization: rawdb, data: { recipients: ['alice', 'carol'] } },
    {
      account: 'rawdb',
      name: 'put',
      authorization: rawdb,
      data: { scope: 'z', table: 't', key: '9', payer: 'rawdb', value: 'beef' },
    },
  ])
  pushSigned(chain, [
    {
      account: 'eosio',
      name: 'updateauth',
      authorization: [{ actor: 'bob', permission: 'active' }],
      data: {
        account: 'bob',
        permission: 'extra',
        parent: 'active',
        auth: { ...keyAuthority(), accounts: [{ permission: { actor: 'alice', permission: 'active' }, weight: 1 }] },
      },
    },
  ])
  pushSigned(chain, [
    {
      account: 'eosio',
      name: 'linkauth',
      authorization: [{ actor: 'bob', permission: 'active' }],
      data: { account: 'bob', code: 'rawdb', type: 'put', requirement: 'extra' },
    },
  ])
  pushSigned(
    chain,
    [
      {
        account: 'eosio.token',
        name: 'transfer',
        authorization: [{ actor: 'bob', permission: 'active' }],
        data: { from: 'bob', to: 'carol', quantity: '1.0000 EOS', memo: 'later' },
      },
    ],
    { delaySec: 1 },
  )
  chain.produceBlock()
  pushSigned(chain, [
    { account: 'rawdb', name: 'erase', authorization: rawdb, data: { scope: 'z', table: 't', key: '9' } },
  ])
  pushSigned(chain, [
    {
      account: 'eosio',
      name: 'unlinkauth',
      authorization: [{ actor: 'bob', permission: 'active' }],
      data: { account: 'bob', code: 'rawdb', type: 'put' },
    },
  ])
  for (let i = 0; i < 4; i++) {
    now += 500
    chain.produceBlock()
  }
  let traces = 0
  let rows = 0
  let generated = 0
  for (let n = 1; n <= chain.head.num; n++) {
    const block = chain.block(n)!
    traces += compareTraces(block.traces)
    const ours = decodeTableDeltas(block.deltas)
    const theirs = decodeShipType<V<{ name: string; rows: { present: boolean; data: string }[] }>[]>(
      'table_delta[]',
      block.deltas,
    )
    assert.deepEqual(
      ours.map((d) => ({
        name: d.name,
        rows: d.rows.map((r) => ({ present: r.present, data: Buffer.from(r.data).toString('hex') })),
      })),
      theirs.map(([, d]) => d),
    )
    for (const delta of ours) {
      for (const row of delta.rows) {
        const reference = decodeShipType<V<Json>>(delta.name, row.data)[1]
        rows++
        if (delta.name === 'contract_row') {
          const r = decodeContractRow(row.data)
          assert.deepEqual(
            {
              code: r.code,
              scope: r.scope,
              table: r.table,
              primary_key: String(r.primaryKey),
              payer: r.payer,
              value: Buffer.from(r.value).toString('hex'),
            },
            { ...reference, primary_key: String(reference.primary_key) },
          )
        } else if (delta.name === 'account') {
          const a = decodeAccountRow(row.data)
          assert.deepEqual([a.name, Buffer.from(a.abi).toString('hex')], [reference.name, reference.abi])
        } else if (delta.name === 'permission') {
          const p = decodePermissionRow(row.data)
          const auth = reference.auth as Json
          assert.deepEqual(
            {
              owner: p.owner,
              name: p.name,
              parent: p.parent,
              threshold: p.threshold,
              keys: p.keys,
              accounts: p.accounts,
            },
            {
              owner: reference.owner,
              name: reference.name,
              parent: reference.parent,
              threshold: auth.threshold,
              keys: auth.keys,
              accounts: auth.accounts,
            },
          )
        } else if (delta.name === 'generated_transaction') {
          const g = decodeGeneratedTransactionRow(row.data)
          generated++
          assert.deepEqual(
            {
              sender: g.sender,
              sender_id: String(g.senderId),
              payer: g.payer,
              trx_id: g.trxId,
              packed_trx: Buffer.from(g.packedTrx).toString('hex'),
            },
            { ...reference, sender_id: String(reference.sender_id) },
          )
        } else if (delta.name === 'permission_link') {
          const l = decodePermissionLinkRow(row.data)
          assert.deepEqual(
            {
              account: l.account,
              code: l.code,
              message_type: l.messageType,
              required_permission: l.requiredPermission,
            },
            reference,
          )
        }
      }
    }
  }
  assert.ok(
    traces > 10 && rows > 30 && generated >= 2,
    `compared ${traces} traces, ${rows} rows, ${generated} generated transactions`,
  )
  chain.close()
})

test('decodeTransactionTraces() agrees with wharfkit on v0 action traces, exceptions, error codes and nested failed traces', () => {
  const action = (version: string, ordinal: number, receipt: boolean) => [
    version,
    {
      action_ordinal: ordinal,
      creator_action_ordinal: ordinal - 1,
      receipt: receipt
        ? [
            'action_receipt_v0',
            {
              receiver: 'eosio',
              act_digest: 'ab'.repeat(32),
              global_sequence: '18446744073709551615',
              recv_sequence: 7,
              auth_sequence: [
                { account: 'alice', sequence: 3 },
                { account: 'bob', sequence: 9 },
              ],
              code_sequence: 1,
              abi_sequence: 2,
            },
          ]
        : null,
      receiver: 'eosio',
      act: {
        account: 'eosio',
        name: 'onblock',
        authorization: [{ actor: 'eosio', permission: 'active' }],
        data: '0102',
      },
      context_free: ordinal === 2,
      elapsed: 12,
      console: 'hello',
      account_ram_deltas: [{ account: 'alice', delta: -240 }],
      except: receipt ? null : 'boom',
      error_code: receipt ? null : 5,
      ...(version === 'action_trace_v1' ? { return_value: 'ff00' } : {}),
    },
  ]
  const trace = (failed: unknown) => [
    'transaction_trace_v0',
    {
      id: 'cd'.repeat(32),
      status: 2,
      cpu_usage_us: 100,
      net_usage_words: 12,
      elapsed: 1,
      net_usage: 96,
      scheduled: true,
      action_traces: [action('action_trace_v0', 1, true), action('action_trace_v1', 2, false)],
      account_ram_delta: { account: 'bob', delta: 5 },
      except: 'hard fail',
      error_code: '3050003',
      failed_dtrx_trace: failed,
      partial: [
        'partial_transaction_v0',
        {
          expiration: '2030-01-01T00:00:00',
          ref_block_num: 1,
          ref_block_prefix: 2,
          max_net_usage_words: 0,
          max_cpu_usage_ms: 0,
          delay_sec: 0,
          transaction_extensions: [{ type: 1, data: 'aa' }],
          signatures: [
            'SIG_K1_Kd9E7zCae7EX2X5VNdBaF8HH2KvHWTLBtHTRHXovZ4ExiX3va3bt7Jt1LvgiY4ZCTNefEzG6e5uZx68tjkxDhxRR6fVWKa',
          ],
          context_free_data: ['0102'],
        },
      ],
    },
  ]
  const bytes = encodeShipType('transaction_trace[]', [trace(trace(null)), trace(null)])
  assert.equal(compareTraces(bytes), 2)
})

test('decodeTransactionTraces() and decodeTableDeltas() refuse malformed bytes with binary_decode_error', () => {
  const good = encodeShipType('table_delta[]', [
    ['table_delta_v0', { name: 'x', rows: [{ present: true, data: '01' }] }],
  ])
  for (const bytes of [
    good.subarray(0, good.length - 1),
    new Uint8Array([...good, 0]),
    fromHex('01ff'),
    fromHex('ffffffff0f'),
  ]) {
    assert.throws(
      () => decodeTableDeltas(bytes),
      (e: { code?: string }) => e.code === 'binary_decode_error',
    )
    assert.throws(
      () => decodeTransactionTraces(bytes),
      (e: { code?: string }) => e.code === 'binary_decode_error',
    )
  }
})
