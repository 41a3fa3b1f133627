import type { StepSource } from '../../src/live/index.ts'
import type { Step, StepPayload, StepType, StorePosition } from '../../src/store/index.ts'

/**
 * An in-memory step log standing in for the store: steps with gapped seqs, blocks applied, forked
 * out and passed by LIB; payloads with data sized `payloadDataBytes`; every read counted, and the
 * shared reads can be held (`hold()`) or slowed (`delayMs`).
 */
export class FakeSource implements StepSource {
  readonly steps: Step[] = []
  /** Payloads of steps at or below this seq are past retention (undefined). */
  retainedAfter = 0
  payloadDataBytes = 16
  delayMs: (() => number) | undefined
  /** The next this-many stepsAfter calls fail. */
  failures = 0
  stepsAfterCalls = 0
  stepPayloadCalls = 0
  payloadsRead = 0
  concurrentReads = 0
  maxConcurrentReads = 0
  private seq = 0
  private head = 0
  private lib = 0
  private variant = 0
  private held: Promise<void> | undefined
  private release: (() => void) | undefined

  /** Appends `count` steps (a random walk of new / undo / redo / irreversible) and returns them. */
  add(count: number, random: () => number = Math.random): Step[] {
    const added: Step[] = []
    const push = (type: StepType, blockNum: number) => {
      this.seq += 1 + Math.floor(random() * 3)
      const step = {
        seq: this.seq,
        type,
        blockNum,
        blockId: `${blockNum}-${type === 'irreversible' ? 0 : this.variant}`,
      }
      this.steps.push(step)
      added.push(step)
    }
    while (added.length < count) {
      const r = random()
      if (r < 0.1 && this.head - this.lib > 2) {
        push('undo', this.head--)
        this.variant++
      } else if (r < 0.3 && this.head - this.lib > 3) push('irreversible', ++this.lib)
      else push(r < 0.35 ? 'redo' : 'new', ++this.head)
    }
    return added
  }

  /** Holds every stepsAfter call until `unhold()`. */
  hold(): void {
    this.held = new Promise((resolve) => (this.release = resolve))
  }

  unhold(): void {
    this.release?.()
    this.held = undefined
  }

  async position(): Promise<StorePosition | undefined> {
    const last = [...this.steps].reverse().find((s) => s.type !== 'irreversible')
    return last ? { head: { blockNum: last.blockNum, blockId: last.blockId }, lib: this.lib } : undefined
  }

  async stepsOfBlock(blockId: string): Promise<Step[]> {
    return this.steps.filter((s) => s.blockId === blockId)
  }

  async stepsAfter(seq: number, limit: number): Promise<Step[]> {
    this.stepsAfterCalls++
    this.concurrentReads++
    this.maxConcurrentReads = Math.max(this.maxConcurrentReads, this.concurrentReads)
    try {
      if (this.held) await this.held
      if (this.failures > 0 && this.failures--) throw new Error('store unavailable')
      const delay = this.delayMs?.() ?? 0
      await new Promise((resolve) => (delay > 0 ? setTimeout(resolve, delay) : setImmediate(resolve)))
      return this.steps.filter((s) => s.seq > seq).slice(0, limit)
    } finally {
      this.concurrentReads--
    }
  }

  async stepPayloads(steps: readonly Step[]): Promise<(StepPayload | undefined)[]> {
    this.stepPayloadCalls++
    this.payloadsRead += steps.length
    await new Promise((resolve) => setImmediate(resolve))
    return steps.map((step) => (step.seq <= this.retainedAfter ? undefined : payloadOf(step, this.payloadDataBytes)))
  }
}

export function payloadOf(step: Step, dataBytes: number): StepPayload {
  return {
    step,
    block: {
      num: step.blockNum,
      id: step.blockId,
      previous: '',
      timestampMs: step.blockNum * 500,
      producer: 'eosio',
      transactionCount: 1,
      actionCount: 1,
    },
    transactions: [
      {
        id: `t${step.seq}`,
        blockNum: step.blockNum,
        blockIndex: 1,
        status: 0,
        cpuUsageUs: 100,
        netUsageWords: 10,
        scheduled: false,
      },
    ],
    actions: [
      {
        globalSequence: step.seq,
        blockNum: step.blockNum,
        trxId: `t${step.seq}`,
        actionOrdinal: 1,
        creatorActionOrdinal: 0,
        receiver: 'eosio.token',
        account: 'eosio.token',
        name: 'transfer',
        authorization: [],
        data: new Uint8Array(dataBytes),
        returnValue: new Uint8Array(0),
        actDigest: '',
        recvSequence: 1n,
        ramDeltas: [],
      },
    ],
    rowChanges: [],
  }
}

/** Resolves once `condition()` holds; fails after `timeoutMs` with `what`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
