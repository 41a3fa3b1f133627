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

/**
 * Which transactions of a block ran each receiver, in as little as the attribution needs: the one transaction id, or
 * `null` once two or more did (attribution asks only whether another transaction ran it).
 */
export type ReceiverRunners = Map<string, string | null>

/** Adds the actions' receivers to `runners`. */
export function addRunners(
  runners: ReceiverRunners,
  actions: Iterable<{ readonly trxId: string; readonly receiver: string }>,
): ReceiverRunners {
  for (const a of actions) {
    const known = runners.get(a.receiver)
    if (known === undefined) runners.set(a.receiver, a.trxId)
    else if (known !== null && known !== a.trxId) runners.set(a.receiver, null)
  }
  return runners
}

/** The receivers another transaction than `trxId` ran (`attributeRowChanges`'s `otherReceivers`). */
export function receiversRunByOthers(runners: ReceiverRunners, trxId: string): Set<string> {
  const out = new Set<string>()
  for (const [receiver, runner] of runners) if (runner !== trxId) out.add(receiver)
  return out
}

/** The receivers of every action of the block that belongs to another transaction than `trxId`. */
export function receiversOfOthers(blockActions: readonly ActionRecord[], trxId: string): Set<string> {
  return receiversRunByOthers(addRunners(new Map(), blockActions), trxId)
}
