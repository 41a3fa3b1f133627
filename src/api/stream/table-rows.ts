import { bigIntToName, toHex, type CompiledAbi } from '../../antelope/index.ts'
import { attributeRowChanges, receiversOfOthers, type DecoderSource } from '../../lifecycle/index.ts'
import { createPayloadMemo } from '../../live/index.ts'
import type { StateService } from '../../state/index.ts'
import type { RowChange, StepPayload } from '../../store/index.ts'
import { AppTableRowsCannotFetchInFutureError, WsMessageDataValidationError } from '../errors.ts'
import type { StreamHandler } from './connection.ts'
import { dataBoolean, dataString } from './envelope.ts'
import { followAfterHead, followFrom, type FeedItem, type FeedStore, type StepFeed } from './feed.ts'
import { progressReporter } from './progress.ts'

interface TableTarget {
  readonly code: string
  readonly scope: string
  readonly table: string
  readonly json: boolean
}

type DbRow = { payer: string; json?: unknown; hex?: string; error?: string }

function parseTarget(data: Readonly<Record<string, unknown>>): TableTarget {
  const code = dataString(data, 'code')
  const table = dataString(data, 'table')
  const scope = dataString(data, 'scope')
  if (!code) throw WsMessageDataValidationError({ reason: "'data.code' required" })
  if (!table) throw WsMessageDataValidationError({ reason: "'data.table' required" })
  if (scope === undefined) throw WsMessageDataValidationError({ reason: "'data.scope' required" })
  return { code, scope, table, json: data.json === undefined ? true : dataBoolean(data, 'json') }
}

/**
 * A row version as `table_delta` carries it: `{payer, json}` or `{payer, hex}`, and `hex` + `error` when decoding
 * fails, as on REST.
 */
function dbRow(payer: string, value: Uint8Array, target: TableTarget, abi: CompiledAbi | undefined): DbRow {
  if (!target.json) return { payer, hex: toHex(value) }
  const rowType = abi?.abi.tables.find((t) => t.name.toString() === target.table)?.type
  if (!abi || rowType === undefined)
    return {
      payer,
      hex: toHex(value),
      error: `Couldn't json decode ROW: no ABI of ${target.code} declares table ${target.table} at this block`,
    }
  const decoded = abi.decode(rowType, value)
  return decoded.ok
    ? { payer, json: decoded.value }
    : { payer, hex: toHex(value), error: `Couldn't json decode ROW: ${decoded.error}` }
}

/**
 * The `table_delta` messages of one step: the block's changes of the table scope, an undo inverted (and in reverse) so
 * it can be applied blindly.
 */
async function deltas(
  item: FeedItem & { payload: StepPayload },
  target: TableTarget,
  decoders: DecoderSource,
): Promise<unknown[]> {
  const { step, payload } = item
  const changes = payload.rowChanges.filter(
    (c) => c.code === target.code && c.table === target.table && c.scope === target.scope,
  )
  if (changes.length === 0) return []
  const abi = target.json ? (await decoders(payload.block.num, [target.code])).abiOf(target.code) : undefined
  const actionIdx = new Map<RowChange, number>()
  for (const trxId of new Set(payload.actions.map((a) => a.trxId))) {
    const own = payload.actions.filter((a) => a.trxId === trxId)
    for (const { change, actionIdx: idx } of attributeRowChanges(
      own,
      changes,
      receiversOfOthers(payload.actions, trxId),
    ))
      actionIdx.set(change, idx)
  }
  const undo = step.type === 'undo'
  const ordered = undo ? [...changes].reverse() : changes
  return ordered.map((c) => {
    const before = c.old?.value ? dbRow(c.old.payer, c.old.value, target, abi) : undefined
    const after = c.value ? dbRow(c.payer, c.value, target, abi) : undefined
    const [oldRow, newRow] = undo ? [after, before] : [before, after]
    const op = oldRow === undefined ? 'ins' : newRow === undefined ? 'rem' : 'upd'
    return {
      block_num: payload.block.num,
      step: step.type,
      dbop: {
        op,
        action_idx: actionIdx.get(c) ?? 0,
        account: c.code,
        table: c.table,
        scope: c.scope,
        key: bigIntToName(c.primaryKey),
        ...(oldRow ? { old: oldRow } : {}),
        ...(newRow ? { new: newRow } : {}),
      },
    }
  })
}

/**
 * `get_table_rows`: `fetch` sends the scope's rows at the start block (`table_snapshot`,
 * `/v0/state/table`'s rows); `listen` then sends every change of the scope after it as
 * `table_delta` with `step` new/undo/redo, an undo inverted so a client applying every delta
 * blindly holds the scope as the chain has it. Decoding follows `setabi`: each block's changes are
 * decoded with the ABI in force at that block.
 */
export function tableRowsHandler(deps: {
  store: FeedStore
  feed: StepFeed
  state: StateService
  decoders: DecoderSource
}): StreamHandler {
  // One step's deltas of a table scope, serialized: built once, sent to every subscriber of that scope and format.
  const shared = createPayloadMemo<string[]>()
  return async (request, out) => {
    if (request.irreversibleOnly) throw WsMessageDataValidationError({ reason: "'irreversible_only' is not supported" })
    if (!request.fetch && !request.listen)
      throw WsMessageDataValidationError({ reason: "one of 'fetch' or 'listen' is required" })
    const target = parseTarget(request.data)
    const shape = JSON.stringify([target.code, target.scope, target.table, target.json])
    const position = await deps.store.position()
    const head = position?.head.blockNum ?? 0
    const asked =
      request.startBlock === 0
        ? head
        : request.startBlock < 0
          ? Math.max(1, head + request.startBlock)
          : request.startBlock
    // The stream continues after the state at `after`: the snapshot's block, or the block before the start.
    let after = { num: asked - 1, id: undefined as string | undefined }
    if (request.fetch) {
      if (asked > head) throw AppTableRowsCannotFetchInFutureError({ startBlock: asked })
      const answer = await deps.state.table({
        account: target.code,
        scope: target.scope,
        table: target.table,
        format: { json: target.json, keyType: 'name', withBlockNum: false },
        withAbi: false,
        blockNum: asked,
      })
      out.send('table_snapshot', { rows: answer.rows })
      after = { num: answer.up_to_block_num ?? asked, id: answer.up_to_block_id }
    }
    if (!request.listen) return undefined
    out.send('listening', { next_block: after.num + 1 })
    const progress = progressReporter(request.withProgress, out)
    const emit = async (items: readonly FeedItem[]) => {
      for (const item of items) {
        if (out.closed) return
        if (item.step.type === 'irreversible') continue
        const payload = item.payload
        if (payload) {
          const messages = await shared(payload, `${shape}|${item.step.type}`, async () =>
            (await deltas({ ...item, payload }, target, deps.decoders)).map((m) => JSON.stringify(m)),
          )
          if (out.closed) return
          for (const m of messages) out.sendRaw('table_delta', m)
        }
        if (item.step.type !== 'undo') progress(item.step.blockNum, item.step.blockId)
      }
      await out.drain()
    }
    const lib = position ? Math.min(position.lib, head) : 0
    if (after.id === undefined && after.num > lib && after.num <= head)
      after.id = (await deps.store.blockByNum(after.num))?.id
    // At or below LIB the blocks after it cannot change: replay them, then follow the log; above LIB follow the log
    // from the state read.
    return after.id !== undefined
      ? followAfterHead({ ...deps, headId: after.id }, emit, out.error)
      : followFrom({ ...deps, fromBlock: after.num + 1, mode: 'apply' }, emit, out.error)
  }
}
