import { test } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { signedTransfer } from '../push/rig.ts'

type Receipt = { auth_sequence: [string, number | string][]; code_sequence: number; abi_sequence: number }
type PushedAction = { action_ordinal: number; receipt: Receipt; elapsed: number; console: string }
type LifecycleAction = {
  action_ordinal: number
  receipt: Receipt | null
  elapsed: number
  console: string
  inline_traces: LifecycleAction[]
}

/** The lifecycle's nested action traces, flattened and by action ordinal. */
function byOrdinal(traces: readonly LifecycleAction[]): Map<number, LifecycleAction> {
  const out = new Map<number, LifecycleAction>()
  const walk = (list: readonly LifecycleAction[]) =>
    list.forEach((a) => (out.set(a.action_ordinal, a), walk(a.inline_traces)))
  walk(traces)
  return out
}

/** A receipt's trace fields in one spelling: push answers u64s as nodeos does (numbers), the lifecycle strings. */
const sequences = (r: Receipt) => ({
  auth_sequence: r.auth_sequence.map(([account, seq]) => [account, String(seq)]),
  code_sequence: r.code_sequence,
  abi_sequence: r.abi_sequence,
})

test('a guaranteed push on a running antler dev answers the stored trace: elapsed, console and receipt sequences per action equal the lifecycle of /v0/transactions/:id, and are not the old constants', async (t) => {
  const p = await startPlatform(t)
  const authorization = `Bearer ${await issueToken(p, p.apiKey)}`
  const body = await signedTransfer(new APIClient({ url: p.chainApi }), { memo: 'processed is the stored trace' })

  const pushed = await fetch(`${p.api}/v1/chain/push_transaction`, {
    method: 'POST',
    headers: { authorization, 'x-eos-push-guarantee': 'in-block' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  })
  const answer = (await pushed.json()) as {
    transaction_id: string
    processed: { elapsed: number; net_usage: number; action_traces: PushedAction[] }
  }
  assert.equal(pushed.status, 200, JSON.stringify(answer))

  const read = await fetch(`${p.api}/v0/transactions/${answer.transaction_id}`, { headers: { authorization } })
  assert.equal(read.status, 200)
  const lifecycle = (await read.json()) as {
    execution_trace: { elapsed: number; net_usage: number; action_traces: LifecycleAction[] }
  }
  const shown = byOrdinal(lifecycle.execution_trace.action_traces)

  const actions = answer.processed.action_traces
  assert.deepEqual(
    actions.map((a) => a.action_ordinal),
    [...shown.keys()].sort((x, y) => x - y),
    'the same actions',
  )
  assert.equal(answer.processed.elapsed, lifecycle.execution_trace.elapsed, 'the transaction elapsed')
  assert.equal(answer.processed.net_usage, lifecycle.execution_trace.net_usage, 'the transaction net_usage')
  for (const a of actions) {
    const l = shown.get(a.action_ordinal)!
    assert.ok(l.receipt, `action ${a.action_ordinal} has a receipt in the lifecycle`)
    assert.deepEqual(sequences(a.receipt), sequences(l.receipt), `action ${a.action_ordinal}: receipt sequences`)
    assert.equal(a.elapsed, l.elapsed, `action ${a.action_ordinal}: elapsed`)
    assert.equal(a.console, l.console, `action ${a.action_ordinal}: console`)
    // Not the constants push answered before (a devchain action's sequences all start at 1).
    assert.ok(a.receipt.auth_sequence.length > 0, `action ${a.action_ordinal}: auth_sequence is not empty`)
    assert.ok(a.receipt.code_sequence > 0, `action ${a.action_ordinal}: code_sequence > 0`)
    assert.ok(a.receipt.abi_sequence > 0, `action ${a.action_ordinal}: abi_sequence > 0`)
  }
})
