import type { GraphqlContext } from './context.ts'
import type { SearchQueryArgs } from './query-resolvers.ts'
import { pageResults, type SearchResult } from './results.ts'

/** The `searchTransactionsBackward` subscription's arguments (limit 0 = unlimited). */
export type BackwardStreamArgs = SearchQueryArgs

const PAGE = 200

/**
 * The `searchTransactionsBackward` subscription: the matches from the high bound down to the low one, newest first,
 * read by search pages (a backward stream never goes live, so it never undoes). Bounds below 1 first lose 1, as for
 * the forward subscription (0 or absent high = the head).
 */
export async function* searchBackwardStream(
  args: BackwardStreamArgs,
  ctx: GraphqlContext,
): AsyncGenerator<SearchResult> {
  const shift = (n: number | null | undefined, absent: number) => {
    const value = n ?? absent
    return value < 1 ? value - 1 : value
  }
  let remaining = args.limit > 0 ? args.limit : Infinity
  let cursor = args.cursor ?? undefined
  const lowBlockNum =
    args.lowBlockNum === null || args.lowBlockNum === undefined ? undefined : shift(args.lowBlockNum, 1)
  const highBlockNum = shift(args.highBlockNum, 0)
  for (;;) {
    const page = await ctx.services.search.searchRows({
      query: args.query,
      bounds: { lowBlockNum, highBlockNum },
      cursor,
      limit: Math.min(PAGE, remaining),
      sort: 'desc',
      withReversible: !args.irreversibleOnly,
      maxLimit: PAGE,
    })
    for (const result of await pageResults(ctx.services, page.rows, page.lib)) {
      yield result
      if (--remaining === 0) return
    }
    if (!page.cursor) return
    cursor = page.cursor
  }
}
