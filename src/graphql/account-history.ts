import { AntlerError, toHex } from '../antelope/index.ts'
import { parseSearchQuery } from '../search/index.ts'
import type { ActionRecord, BlockRecord } from '../store/index.ts'
import type { GraphqlContext } from './context.ts'
import { checkAccount, GRAPHQL_MAX_LIMIT } from './query-resolvers.ts'

export interface AccountHistoryArgs {
  readonly account: string
  readonly contract?: string | null
  readonly limit: number
  readonly cursor?: string | null
}

/** A `SimpleActionTrace`: one action with its block and transaction. */
function simpleAction(action: ActionRecord, block: BlockRecord, executionIndex: number, decoded: unknown) {
  return {
    blockNum: action.blockNum,
    blockID: block.id,
    blockTime: block.timestampMs,
    trxID: action.trxId,
    seq: action.globalSequence,
    executionIndex,
    receipt: {
      receiver: action.receiver,
      digest: action.actDigest,
      globalSequence: action.globalSequence,
      codeSequence: action.trace?.codeSequence ?? 0,
      abiSequence: action.trace?.abiSequence ?? 0,
    },
    receiver: action.receiver,
    account: action.account,
    name: action.name,
    authorization: action.authorization,
    data: decoded ?? null,
    json: decoded ?? null,
    hexData: toHex(action.data),
    console: action.trace?.console ?? '',
    contextFree: action.trace?.contextFree ?? false,
    isNotify: action.receiver !== action.account,
  }
}

/**
 * `getAccountHistoryActions`: the actions the account received (notifications included), newest first, one edge per
 * action, from the search index (`receiver:<account>`, with `account:<contract>` to narrow it). Each edge's cursor
 * resumes right after (below) its action.
 */
export async function accountHistoryActions(_: unknown, args: AccountHistoryArgs, ctx: GraphqlContext) {
  checkAccount(args.account, 'account')
  if (args.contract) checkAccount(args.contract, 'contract')
  if (!Number.isSafeInteger(args.limit) || args.limit < 1 || args.limit > GRAPHQL_MAX_LIMIT)
    throw new AntlerError('request_validation_error', {
      errors: { limit: [`limit must be an integer from 1 to ${GRAPHQL_MAX_LIMIT}`] },
    })
  const { store, cursors, decoders } = ctx.services
  const expr = parseSearchQuery(`receiver:${args.account}${args.contract ? ` account:${args.contract}` : ''}`)
  const after = args.cursor ? cursors.decode(args.cursor) : undefined
  const matches = await store.searchActions({
    query: expr,
    direction: 'backward',
    fromSeq: after ? after.seq - 1 : Number.MAX_SAFE_INTEGER,
    limit: args.limit + 1,
  })
  const page = matches.slice(0, args.limit)
  const seqs = page.map((m) => m.seq)
  const executions = await store.executionsOfActions(seqs)
  const actions = seqs.flatMap((seq) => {
    const execution = executions.get(seq)
    const index = execution ? seq - execution.actions[0].globalSequence : -1
    const action = execution?.actions[index]
    return action?.globalSequence === seq ? [{ action, index }] : []
  })
  const blocks = await store.blocksByNums([...new Set(actions.map((a) => a.action.blockNum))])
  const edges = []
  for (const { action, index } of actions) {
    const block = blocks.get(action.blockNum)
    if (!block) continue
    const decode = await decoders(block.num, [action.account])
    edges.push({
      cursor: cursors.encode({ blockNum: block.num, blockId: block.id, seq: action.globalSequence }),
      node: simpleAction(action, block, index, decode(action.account, action.name, action.data)),
    })
  }
  return {
    edges,
    pageInfo: {
      startCursor: edges[0]?.cursor ?? '',
      endCursor: edges.at(-1)?.cursor ?? '',
      hasNextPage: matches.length > args.limit,
      hasPreviousPage: after !== undefined,
    },
  }
}
