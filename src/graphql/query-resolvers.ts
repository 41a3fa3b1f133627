import { AntlerError, isValidName } from '../antelope/index.ts'
import type { TimeComparator } from '../store/index.ts'
import type { GraphqlContext } from './context.ts'
import { pageResults } from './results.ts'

/** The largest `limit` of a search query (dfuse's). */
export const GRAPHQL_MAX_LIMIT = 1000

/** The arguments every search field shares (queries and subscriptions, either direction). */
export interface SearchQueryArgs {
  readonly query: string
  readonly lowBlockNum?: number | null
  readonly highBlockNum?: number | null
  readonly cursor?: string | null
  /** Queries: 1 to 1,000; subscriptions: 0 = unlimited. */
  readonly limit: number
  readonly irreversibleOnly: boolean
}

/** One page of a search query, either direction, as the search service reads it for REST. */
async function searchPage(args: SearchQueryArgs, sort: 'asc' | 'desc', ctx: GraphqlContext) {
  if (args.limit > GRAPHQL_MAX_LIMIT)
    throw new AntlerError('request_validation_error', {
      errors: { limit: [`Invalid limit for this query: max ${GRAPHQL_MAX_LIMIT}`] },
    })
  const { search } = ctx.services
  const page = await search.searchRows({
    query: args.query,
    bounds: { lowBlockNum: args.lowBlockNum ?? undefined, highBlockNum: args.highBlockNum ?? undefined },
    cursor: args.cursor ?? undefined,
    limit: args.limit,
    sort,
    withReversible: !args.irreversibleOnly,
    maxLimit: GRAPHQL_MAX_LIMIT,
  })
  return { cursor: page.cursor, results: await pageResults(ctx.services, page.rows, page.lib) }
}

const COMPARATORS: Record<string, TimeComparator> = { GTE: 'gte', GT: 'gt', LTE: 'lte', LT: 'lt', EQ: 'eq' }

function checkAccount(account: string, field: string): void {
  if (!isValidName(account) || account === '')
    throw new AntlerError('request_validation_error', { errors: { [field]: [`${field} must be an account name`] } })
}

/** The Query root's search and block-id fields. */
export const searchQueryResolvers = {
  async searchTransactionsForward(_: unknown, args: SearchQueryArgs, ctx: GraphqlContext) {
    const page = await searchPage(args, 'asc', ctx)
    // null at the end of the range, as dfuse sent it.
    return { cursor: page.cursor || null, results: page.results }
  },

  async searchTransactionsBackward(_: unknown, args: SearchQueryArgs, ctx: GraphqlContext) {
    // Never null backward: '' at the end of the range.
    return searchPage(args, 'desc', ctx)
  },

  async blockIDByTime(_: unknown, args: { time: number; comparator: string }, ctx: GraphqlContext) {
    const comparator = COMPARATORS[args.comparator] ?? 'lte'
    const block = await ctx.services.store.blockByTime({ timeMs: args.time, comparator })
    if (!block)
      throw new AntlerError('block_time_not_found', {
        time: new Date(args.time).toISOString(),
        comparator: args.comparator,
      })
    return { time: block.timestampMs, num: block.num, id: block.id }
  },

  /** The block of the `newaccount` that created the account, found by a search of the index. */
  async blockIDAtAccountCreation(_: unknown, args: { account: string }, ctx: GraphqlContext) {
    checkAccount(args.account, 'account')
    const page = await ctx.services.search.searchRows({
      query: `receiver:eosio action:newaccount data.name:${args.account}`,
      bounds: {},
      limit: 1,
      sort: 'asc',
      withReversible: true,
    })
    const row = page.rows[0]
    if (!row) throw new AntlerError('data_account_creation_not_found_error', { account: args.account })
    return { time: row.block.timestampMs, num: row.block.num, id: row.block.id }
  },
}

export { checkAccount }
