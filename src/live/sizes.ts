import type { ActionRecord, RowChange, Step, StepPayload, TransactionRecord } from '../store/index.ts'
import type { LiveStep } from './types.ts'

/** A record's fixed overhead (object headers, numbers, short names), a rough figure. */
const RECORD_BYTES = 160

function transactionBytes(t: TransactionRecord): number {
  const d = t.details
  if (!d) return RECORD_BYTES
  let n = RECORD_BYTES * 2 + (d.except?.length ?? 0)
  if (d.header)
    n +=
      d.header.signatures.reduce((s, x) => s + x.length, 0) + d.header.contextFreeData.reduce((s, x) => s + x.length, 0)
  for (const u of d.unreceipted) n += RECORD_BYTES + u.data.length + u.trace.console.length
  if (d.deferred) n += RECORD_BYTES + d.deferred.packedTrx.length
  return n
}

const actionBytes = (a: ActionRecord): number =>
  RECORD_BYTES * 2 +
  a.data.length +
  a.returnValue.length +
  (a.trace ? a.trace.console.length + (a.trace.except?.length ?? 0) : 0) +
  a.ramDeltas.length * 48

const rowBytes = (r: RowChange): number => RECORD_BYTES + (r.value?.length ?? 0) + (r.old?.value?.length ?? 0)

/** An estimate of the memory a payload holds, in bytes (what the ring's and the queues' byte bounds count). */
export function payloadBytes(payload: StepPayload | undefined): number {
  if (!payload) return RECORD_BYTES
  let n = RECORD_BYTES * 2
  for (const t of payload.transactions) n += transactionBytes(t)
  for (const a of payload.actions) n += actionBytes(a)
  for (const r of payload.rowChanges) n += rowBytes(r)
  return n
}

/** A step with its payload as the hub hands it out; a missing payload is marked past retention. */
export function liveStep(step: Step, payload: StepPayload | undefined): LiveStep {
  return { step, payload, pastRetention: payload === undefined, bytes: payloadBytes(payload) }
}
