import { formatRfc3339 } from '../../antelope/index.ts'
import type { BlockRecord } from '../../store/index.ts'
import { AppHeadInfoNotReadyError, WsMessageDataValidationError } from '../errors.ts'
import type { StreamHandler } from './connection.ts'
import { followAfterHead, type FeedStore, type StepFeed } from './feed.ts'

function headInfo(head: BlockRecord, lib: { num: number; id: string }) {
  return {
    last_irreversible_block_num: lib.num,
    last_irreversible_block_id: lib.id,
    head_block_num: head.num,
    head_block_id: head.id,
    head_block_time: formatRfc3339(head.timestampMs),
    head_block_producer: head.producer,
  }
}

/**
 * `get_head_info`: `fetch` answers the head now; `listen` sends it at once, then one per
 * block applied (fork-aware: after an undo the next applied block is the new head). No `listening`
 * reply, as dfuse.
 */
export function headInfoHandler(deps: { store: FeedStore; feed: StepFeed }): StreamHandler {
  return async (request, out) => {
    if (request.irreversibleOnly) throw WsMessageDataValidationError({ reason: "'irreversible_only' is not supported" })
    if (!request.fetch && !request.listen)
      throw WsMessageDataValidationError({ reason: "one of 'fetch' or 'listen' is required" })
    const position = await deps.store.position()
    const head = position && (await deps.store.blockByNum(position.head.blockNum))
    const libNum = position ? Math.min(position.lib, position.head.blockNum) : 0
    const libBlock = libNum > 0 ? await deps.store.blockByNum(libNum) : undefined
    let lib = { num: libBlock?.num ?? 0, id: libBlock?.id ?? '' }
    if (!head || !position) {
      if (!request.listen) throw AppHeadInfoNotReadyError()
    } else out.send('head_info', headInfo(head, lib))
    if (!request.listen) return undefined
    return followAfterHead(
      { ...deps, headId: position?.head.blockId },
      (items) => {
        for (const { step, payload } of items) {
          if (step.type === 'irreversible' && step.blockNum > lib.num) lib = { num: step.blockNum, id: step.blockId }
          else if ((step.type === 'new' || step.type === 'redo') && payload)
            out.send('head_info', headInfo(payload.block, lib))
        }
      },
      out.error,
    )
  }
}
