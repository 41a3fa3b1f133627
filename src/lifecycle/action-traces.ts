import { formatNodeosTime, toHex } from '../antelope/index.ts'
import type { ActionRecord, BlockRecord, UnreceiptedAction } from '../store/index.ts'
import type { WireAction, WireActionTrace } from './types.ts'

/** Decodes action data with the ABI in force at the block; undefined when there is none or it fails. */
export type ActionDataDecoder = (account: string, name: string, data: Uint8Array) => unknown

/** An action of the trace, executed (with a receipt) or not (a failed transaction's). */
export type TracedAction = { readonly executed: ActionRecord } | { readonly unreceipted: UnreceiptedAction }

export function wireAction(
  args: { account: string; name: string; authorization: WireAction['authorization']; data: Uint8Array },
  decode: ActionDataDecoder,
): WireAction {
  const json = decode(args.account, args.name, args.data)
  const base = {
    account: args.account,
    name: args.name,
    authorization: args.authorization.map((l) => ({ actor: l.actor, permission: l.permission })),
  }
  return json === undefined
    ? { ...base, hex_data: toHex(args.data) }
    : { ...base, data: json, hex_data: toHex(args.data) }
}

const fromHex = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'))

function ordinals(a: TracedAction): { ordinal: number; creator: number } {
  return 'executed' in a
    ? { ordinal: a.executed.actionOrdinal, creator: a.executed.creatorActionOrdinal }
    : { ordinal: a.unreceipted.actionOrdinal, creator: a.unreceipted.creatorActionOrdinal }
}

/** One action trace as nodeos's v1 JSON renders it, without its children. */
function flatTrace(
  a: TracedAction,
  trxId: string,
  block: BlockRecord,
  blockTime: string,
  decode: ActionDataDecoder,
): Omit<WireActionTrace, 'inline_traces'> {
  const common = { trx_id: trxId, block_num: block.num, block_time: blockTime, producer_block_id: block.id }
  if ('executed' in a) {
    const x = a.executed
    const trace = x.trace
    return {
      action_ordinal: x.actionOrdinal,
      creator_action_ordinal: x.creatorActionOrdinal,
      receipt: {
        receiver: x.receiver,
        act_digest: x.actDigest,
        global_sequence: x.globalSequence.toString(),
        recv_sequence: x.recvSequence.toString(),
        auth_sequence: trace?.authSequence ?? [],
        code_sequence: trace?.codeSequence ?? 0,
        abi_sequence: trace?.abiSequence ?? 0,
      },
      receiver: x.receiver,
      act: wireAction({ account: x.account, name: x.name, authorization: x.authorization, data: x.data }, decode),
      context_free: trace?.contextFree ?? false,
      elapsed: trace?.elapsedUs ?? 0,
      console: trace?.console ?? '',
      ...common,
      account_ram_deltas: x.ramDeltas.map((d) => ({ account: d.account, delta: d.delta.toString() })),
      except: trace?.except ?? null,
      return_value: toHex(x.returnValue),
    }
  }
  const x = a.unreceipted
  return {
    action_ordinal: x.actionOrdinal,
    creator_action_ordinal: x.creatorActionOrdinal,
    receipt: null,
    receiver: x.receiver,
    act: wireAction(
      { account: x.account, name: x.name, authorization: x.authorization, data: fromHex(x.data) },
      decode,
    ),
    context_free: x.trace.contextFree,
    elapsed: x.trace.elapsedUs,
    console: x.trace.console,
    ...common,
    account_ram_deltas: [],
    except: x.trace.except ?? null,
    return_value: '',
  }
}

/**
 * The trace's actions nested as nodeos's legacy `inline_traces` (each action under the one that
 * created it, notifications included, by action ordinal), and dfuse's creation tree: one
 * `[node_index, parent_node_index (-1 for a root), action_index]` per action in depth-first order,
 * where `action_index` is the action's position in execution order (`executionOrder`).
 */
export function actionTree(
  executionOrder: readonly TracedAction[],
  trxId: string,
  block: BlockRecord,
  decode: ActionDataDecoder,
): { traces: WireActionTrace[]; creationTree: [number, number, number][] } {
  const children = new Map<number, { action: TracedAction; index: number }[]>()
  executionOrder.forEach((action, index) => {
    const { creator } = ordinals(action)
    const list = children.get(creator) ?? []
    list.push({ action, index })
    children.set(creator, list)
  })
  for (const list of children.values()) list.sort((x, y) => ordinals(x.action).ordinal - ordinals(y.action).ordinal)
  const creationTree: [number, number, number][] = []
  const blockTime = formatNodeosTime(block.timestampMs)
  // Ordinals are unique within a trace, so a cycle is impossible; the depth guard bounds a corrupt store.
  const build = (parentOrdinal: number, parentNode: number, depth: number): WireActionTrace[] =>
    depth > 1_000
      ? []
      : (children.get(parentOrdinal) ?? []).map(({ action, index }) => {
          const node = creationTree.length
          creationTree.push([node, parentNode, index])
          return {
            ...flatTrace(action, trxId, block, blockTime, decode),
            inline_traces: build(ordinals(action).ordinal, node, depth + 1),
          }
        })
  return { traces: build(0, -1, 0), creationTree }
}
