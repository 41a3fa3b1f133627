import { AbiCache, type DecodeResult } from '../../src/antelope/index.ts'
import {
  blockSearchTerms,
  dataSearchTerms,
  type ActionRecord,
  type SearchExpr,
  type Store,
} from '../../src/store/index.ts'

/** A stored action with everything a query can ask of it. */
export interface ScannedAction {
  readonly action: ActionRecord
  readonly seq: number
  readonly terms: ReadonlySet<string>
  readonly flags: { readonly input: boolean; readonly notif: boolean; readonly scheduled: boolean }
}

/**
 * Every action the store holds, in global-sequence order, read one by one (`actionsBySeq` over
 * every sequence from the first block's), each with its search terms recomputed from the stored
 * block (its actions, its row changes, data decoded with the ABI the store holds at that block)
 * and its flags: what the index should answer, without the index.
 */
export async function scanStore(store: Store): Promise<ScannedAction[]> {
  const first = await store.firstSeqFromBlock(1)
  if (first === undefined) return []
  const actions: ActionRecord[] = []
  for (let seq = first; ; seq += 2000) {
    const chunk = await store.actionsBySeq(Array.from({ length: 2000 }, (_, i) => seq + i))
    if (chunk.length === 0) break
    actions.push(...chunk)
  }
  const byBlock = new Map<number, ActionRecord[]>()
  for (const a of actions) byBlock.set(a.blockNum, [...(byBlock.get(a.blockNum) ?? []), a])
  const abis = new AbiCache(64)
  const out: ScannedAction[] = []
  for (const [blockNum, inBlock] of byBlock) {
    const decoders = new Map<string, ((name: string, data: Uint8Array) => DecodeResult | undefined) | undefined>()
    const decoderOf = async (account: string) => {
      if (!decoders.has(account)) {
        const stored = await store.abi({ account, blockNum })
        const compiled = stored && stored.abi.length ? abis.fromBinary(stored.abi) : undefined
        decoders.set(
          account,
          compiled?.ok
            ? (name, data) => {
                const type = compiled.value.actionType(name)
                return type ? compiled.value.decode(type, data) : undefined
              }
            : undefined,
        )
      }
      return decoders.get(account)
    }
    const dataTerms: string[][] = []
    for (const a of inBlock) dataTerms.push(dataSearchTerms(a, (await decoderOf(a.account))?.(a.name, a.data)))
    const rows = await store.rowChanges(blockNum)
    const terms = blockSearchTerms(inBlock, rows, (i) => dataTerms[i])
    const scheduled = new Map<string, boolean>()
    for (const [i, a] of inBlock.entries()) {
      if (!scheduled.has(a.trxId))
        scheduled.set(
          a.trxId,
          (await store.transactionHistory(a.trxId)).records.some((r) => r.blockNum === blockNum && r.scheduled),
        )
      out.push({
        action: a,
        seq: Number(a.globalSequence),
        terms: new Set([...terms[i], `trx_id:${a.trxId}`]),
        flags: {
          input: a.creatorActionOrdinal === 0,
          notif: a.receiver !== a.account,
          scheduled: scheduled.get(a.trxId)!,
        },
      })
    }
  }
  return out
}

/** Whether an action satisfies a query (the store's SearchExpr semantics, evaluated directly). */
export function matches(expr: SearchExpr, a: ScannedAction): boolean {
  if ('term' in expr) return a.terms.has(expr.term)
  if ('flag' in expr) return a.flags[expr.flag] === expr.value
  if ('and' in expr) return expr.and.every((e) => matches(e, a))
  if ('or' in expr) return expr.or.some((e) => matches(e, a))
  return !matches(expr.not, a)
}

/** One expected row: a transaction's matching actions (consecutive in sequence order). */
export interface ExpectedRow {
  readonly trxId: string
  readonly blockNum: number
  readonly seqs: number[]
}

/** The matching actions of `actions` grouped into transaction rows, ascending. */
export function expectedRows(
  actions: readonly ScannedAction[],
  expr: SearchExpr,
  keep: (a: ScannedAction) => boolean,
): ExpectedRow[] {
  const rows: ExpectedRow[] = []
  for (const a of actions) {
    if (!keep(a) || !matches(expr, a)) continue
    const last = rows[rows.length - 1]
    if (last && last.trxId === a.action.trxId && last.blockNum === a.action.blockNum) last.seqs.push(a.seq)
    else rows.push({ trxId: a.action.trxId, blockNum: a.action.blockNum, seqs: [a.seq] })
  }
  return rows
}
