import {
  DataTrxAppearanceTimeoutError,
  DataTrxNotFoundError,
  type LifecycleService,
  type TransactionLifecycle,
} from '../../lifecycle/index.ts'
import type { Store } from '../../store/index.ts'
import { WsMessageDataValidationError } from '../errors.ts'
import type { StreamHandler } from './connection.ts'
import { dataString } from './envelope.ts'
import { followAfterHead, type FeedStore, type StepFeed } from './feed.ts'

/** How long a listening lifecycle stream waits for its transaction to appear or change (dfuse: 300 s). */
export const LIFECYCLE_WAIT_MS = 300_000

function checkId(id: string | undefined): string {
  if (id === undefined || id === '') throw WsMessageDataValidationError({ reason: "'data.id' required" })
  if (id.length < 8) throw WsMessageDataValidationError({ reason: 'transaction id too short' })
  if (id.length > 64) throw WsMessageDataValidationError({ reason: 'transaction id too long' })
  if (id.length % 2 !== 0) throw WsMessageDataValidationError({ reason: 'transaction id odd length' })
  if (!/^[0-9a-fA-F]+$/.test(id)) throw WsMessageDataValidationError({ reason: 'transaction id is not hexadecimal' })
  return id.toLowerCase()
}

/** A lifecycle is final once what ended it (execution or cancelation) is irreversible. */
const settled = (l: TransactionLifecycle) =>
  (l.execution_trace !== null && l.execution_irreversible) ||
  (l.canceled_by !== null && l.cancelation_irreversible) ||
  (l.transaction_status === 'expired' && l.creation_irreversible)

/**
 * `get_transaction_lifecycle`: `fetch` answers the lifecycle (an id prefix of 8+ hex digits
 * is enough when it names one transaction); `listen` (full id only) sends a fresh lifecycle each
 * time a block holding the transaction is applied, undone or becomes irreversible, and ends once
 * its execution or cancelation is irreversible; each wait gives up after 300 s.
 */
export function transactionLifecycleHandler(deps: {
  store: FeedStore & Pick<Store, 'transactionsByIdPrefix'>
  feed: StepFeed
  lifecycle: LifecycleService
  waitMs?: number
}): StreamHandler {
  return async (request, out) => {
    if (request.irreversibleOnly) throw WsMessageDataValidationError({ reason: "'irreversible_only' is not supported" })
    if (!request.fetch && !request.listen)
      throw WsMessageDataValidationError({ reason: "one of 'fetch' or 'listen' is required" })
    let id = checkId(dataString(request.data, 'id'))
    if (request.listen && id.length !== 64)
      throw WsMessageDataValidationError({ reason: "'listen' needs the full 64-character transaction id" })
    if (id.length < 64) {
      const matches = await deps.store.transactionsByIdPrefix(id, 2)
      const ids = new Set(matches.map((m) => m.id))
      if (ids.size === 1) id = [...ids][0]
    }
    const position = await deps.store.position()
    const current = await deps.lifecycle.lifecycle(id)
    if (current) out.send('transaction_lifecycle', { lifecycle: current })
    if (!request.listen) {
      if (!current) throw DataTrxNotFoundError({ trxId: id })
      return undefined
    }
    if (current && settled(current)) return undefined
    out.send('listening', { next_block: (position ? Math.min(position.lib, position.head.blockNum) : 0) + 1 })

    let lastSeen = position?.head.blockId ?? ''
    let timer: NodeJS.Timeout | undefined
    // `inner` is set below, before anything can call close() (the timer and the feed act later).
    const listener = {
      close() {
        clearTimeout(timer)
        inner.close()
      },
    }
    const armTimer = () => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        out.error(DataTrxAppearanceTimeoutError({ trxId: id, lastSeenBlockId: lastSeen }))
        listener.close()
      }, deps.waitMs ?? LIFECYCLE_WAIT_MS)
      timer.unref()
    }
    armTimer()
    const inner = followAfterHead(
      { ...deps, headId: position?.head.blockId },
      async (items) => {
        for (const { step, payload } of items) {
          lastSeen = step.blockId
          if (!payload?.transactions.some((t) => t.id === id)) continue
          const next = await deps.lifecycle.lifecycle(id)
          if (!next || out.closed) continue
          armTimer()
          out.send('transaction_lifecycle', { lifecycle: next })
          if (settled(next)) {
            listener.close()
            return
          }
        }
      },
      out.error,
    )
    return listener
  }
}
