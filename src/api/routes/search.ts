import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SEARCH_LIMITS, type SearchRequest, type SearchService } from '../../search/index.ts'
import { RequestValidationError } from '../errors.ts'
import { errorResponses } from '../schemas.ts'

const invalid = (param: string, sentence: string) => RequestValidationError({ errors: { [param]: [sentence] } })

/**
 * The parameters as strings: numbers and booleans are read here, in decimal digits only and with
 * dfuse's rules (Ajv's coercion would take `1e3`, `0x10` or ` ` for numbers). Lengths only bound
 * what is worth reading; the query's own limits are the parser's.
 */
const SearchQuery = Type.Object({
  q: Type.Optional(Type.String({ description: 'the query, e.g. `receiver:eosio.token action:transfer data.to:bob`' })),
  start_block: Type.Optional(
    Type.String({
      maxLength: 32,
      description: 'default 0 (asc: block 1, desc: the searchable head); negative: blocks below the searchable head',
    }),
  ),
  block_count: Type.Optional(
    Type.String({ maxLength: 32, description: `blocks searched from start_block; default ${SEARCH_LIMITS.maxBlock}` }),
  ),
  limit: Type.Optional(
    Type.String({
      maxLength: 32,
      description: `transactions per page, 1 to ${SEARCH_LIMITS.maxLimit}; default ${SEARCH_LIMITS.defaultLimit}`,
    }),
  ),
  sort: Type.Optional(Type.String({ maxLength: 32, description: 'asc (default) or desc, any case' })),
  cursor: Type.Optional(Type.String({ description: 'the cursor of an earlier page, in either direction' })),
  with_reversible: Type.Optional(
    Type.String({ maxLength: 32, description: 'true or false (default): include blocks above LIB' }),
  ),
  format: Type.Optional(Type.String({ maxLength: 32, description: 'accepted and ignored (dfuse)' })),
})

const SearchAnswer = Type.Object({
  cursor: Type.String({ description: "resumes after the last transaction; '' when the range holds no further match" }),
  transactions: Type.Union([
    Type.Array(
      Type.Object({
        lifecycle: Type.Unknown({ description: 'the TransactionLifecycle, as GET /v0/transactions/{id} answers it' }),
        action_idx: Type.Array(Type.Integer(), {
          description: "indexes of the matching actions among the transaction's actions in execution order",
        }),
      }),
    ),
    Type.Null(),
  ]),
  forked_head_warning: Type.Optional(
    Type.Boolean({
      description: "present (true) when the cursor's block was forked out: the page continues on the new chain",
    }),
  ),
})

/**
 * An integer parameter in decimal digits (a leading `-` where negatives are allowed), within a safe range; undefined
 * when absent.
 */
function integerParam(param: string, value: string | undefined, negative: boolean): number | undefined {
  if (value === undefined) return undefined
  if (!(negative ? /^-?[0-9]{1,20}$/ : /^[0-9]{1,20}$/).test(value))
    throw invalid(
      param,
      `The ${param} field must be ${negative ? 'an integer' : 'a non-negative integer'} in decimal digits`,
    )
  return Number(value)
}

/** `with_reversible`: exactly `true` or `false` (dfuse's search rule, stricter than the state endpoints'). */
function booleanParam(param: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined
  if (value !== 'true' && value !== 'false') throw invalid(param, `The ${param} field must be true or false`)
  return value === 'true'
}

function sortParam(value: string | undefined): 'asc' | 'desc' | undefined {
  if (value === undefined) return undefined
  const sort = value.toLowerCase()
  if (sort !== 'asc' && sort !== 'desc') throw invalid('sort', 'The sort field must be asc or desc')
  return sort
}

/**
 * `GET /v0/search/transactions` (docs/API.md): search with the query language and cursors; a token is
 * needed.
 */
export const searchRoutes: FastifyPluginAsyncTypebox<{ search: SearchService }> = async (app, opts) => {
  app.get(
    '/v0/search/transactions',
    {
      schema: {
        summary: 'Transactions whose actions match a query, by block, in pages with cursors',
        querystring: SearchQuery,
        response: { 200: SearchAnswer, ...errorResponses },
      },
    },
    async (request, reply) => {
      const q = request.query
      if (q.q === undefined || q.q.trim() === '') throw invalid('q', 'The q field is required.')
      const search: SearchRequest = {
        query: q.q,
        startBlock: integerParam('start_block', q.start_block, true),
        blockCount: integerParam('block_count', q.block_count, false),
        limit: integerParam('limit', q.limit, false),
        sort: sortParam(q.sort),
        cursor: q.cursor,
        withReversible: booleanParam('with_reversible', q.with_reversible),
      }
      // Sent as built (bytes are not serialized again): the JSON of final lifecycles and of pinned pages is kept
      // (docs/ARCHITECTURE.md, "Search caches").
      const answer = await opts.search.searchTransactionsBody(search)
      request.documents = answer.transactions
      return reply.type('application/json; charset=utf-8').send(answer.body)
    },
  )
}
