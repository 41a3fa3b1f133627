import type { ActionRecord, RowChange } from '../store/index.ts'

/**
 * The row changes of a block that one transaction made, as far as SHiP lets us tell: SHiP reports
 * row changes per block, not per action, so a change of contract C is the transaction's only when
 * no other transaction of the block ran C; it is then placed at the transaction's last action run
 * by C (`actionIdx`: position in the transaction's execution order).
 */
export function attributeRowChanges(
  actions: readonly ActionRecord[],
  rowChanges: readonly RowChange[],
  otherReceivers: ReadonlySet<string>,
): { change: RowChange; actionIdx: number }[] {
  const lastByReceiver = new Map<string, number>()
  actions.forEach((a, index) => lastByReceiver.set(a.receiver, index))
  return rowChanges.flatMap((change) => {
    const actionIdx = lastByReceiver.get(change.code)
    return actionIdx === undefined || otherReceivers.has(change.code) ? [] : [{ change, actionIdx }]
  })
}

/** The receivers of every action of the block that belongs to another transaction than `trxId`. */
export function receiversOfOthers(blockActions: readonly ActionRecord[], trxId: string): Set<string> {
  return new Set(blockActions.filter((a) => a.trxId !== trxId).map((a) => a.receiver))
}
