import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { BoundedCache, createBlockDecoderSource } from '../../lifecycle/index.ts'
import {
  HyperionBadRequestError,
  HyperionNotFoundError,
  HYPERION_LIMITS,
  planActionQuery,
  searchActionDocuments,
  checkTransaction,
  createdAccounts,
  creatorOf,
  simpleAction,
  transactionDocuments,
} from '../../hyperion/index.ts'
import type { HyperionRouteOptions } from './index.ts'
import { withEnvelope } from './envelope.ts'

/** get_actions pages kept whose range is irreversible: at most 500, or 16 MiB of documents (as the search route's). */
const PINNED_PAGES = { entries: 500, bytes: 16 * 2 ** 20 }

/** A kept page and the bytes of its documents' JSON (the cache's weight). */
interface PinnedPage {
  readonly page: Awaited<ReturnType<typeof searchActionDocuments>>
  readonly bytes: number
}

/**
 * A query's key: its parameters in name order, so the same question asked in another order is the same page (the
 * token and Hyperion's `ignoreCache` are not part of the question).
 */
const pinnedKey = (query: Record<string, unknown>): string =>
  JSON.stringify(
    Object.keys(query)
      .filter((k) => k !== 'token' && k !== 'ignoreCache')
      .sort()
      .map((k) => [k, query[k]]),
  )

/** Hyperion refuses a deeper `skip` (Elasticsearch's result window). */
const MAX_SKIP = 10_000
/** `track` when not given: Hyperion's default `track_total_hits`. */
const DEFAULT_TRACK = 10_000
/** `track=true` counts exactly in Hyperion; Antler counts up to this many documents (docs/HYPERION.md). */
const MAX_TRACK = 100_000

const NAME = Type.String({ minLength: 1, maxLength: 12 })
const UINT = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

const ACTION = Type.Object({
  '@timestamp': Type.String(),
  timestamp: Type.String(),
  block_num: Type.Number(),
  block_id: Type.String(),
  trx_id: Type.String(),
  act: Type.Object(
    {
      account: Type.String(),
      name: Type.String(),
      authorization: Type.Array(Type.Object({ actor: Type.String(), permission: Type.String() })),
      data: Type.Unknown(),
      hex_data: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  ),
  receipts: Type.Array(
    Type.Object({
      receiver: Type.String(),
      global_sequence: Type.Number(),
      recv_sequence: Type.Number(),
      auth_sequence: Type.Array(Type.Object({ account: Type.String(), sequence: Type.Number() })),
    }),
  ),
  cpu_usage_us: Type.Optional(Type.Number()),
  net_usage_words: Type.Optional(Type.Number()),
  signatures: Type.Optional(Type.Array(Type.String())),
  account_ram_deltas: Type.Optional(Type.Array(Type.Object({ account: Type.String(), delta: Type.Number() }))),
  global_sequence: Type.Number(),
  producer: Type.String(),
  action_ordinal: Type.Number(),
  creator_action_ordinal: Type.Number(),
})

const SIMPLE_ACTION = Type.Object({
  block: Type.Number(),
  timestamp: Type.String(),
  irreversible: Type.Optional(Type.Boolean()),
  contract: Type.String(),
  action: Type.String(),
  actors: Type.String(),
  notified: Type.String(),
  transaction_id: Type.String(),
  data: Type.Unknown(),
})

/** `track`: true, false or a cap; the count's cap (undefined: no `total`). */
function countCap(track: string | undefined): number | undefined {
  if (track === undefined || track === '') return DEFAULT_TRACK
  if (track === 'true') return MAX_TRACK
  if (track === 'false') return undefined
  if (!/^\d{1,9}$/.test(track)) throw HyperionBadRequestError('track must be true, false or a number')
  return Math.min(Number(track), MAX_TRACK)
}

/**
 * /v2/history/get_actions, get_transaction, check_transaction, get_creator, get_created_accounts (docs/HYPERION.md).
 */
export const historyActionRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async (app, { hyperion }) => {
  const { store } = hyperion
  const decoders = createBlockDecoderSource(store)
  // Pages that can never change (their range at or below LIB), by their query: answered again from here, `cached`.
  const pinned = new BoundedCache<string, PinnedPage>(PINNED_PAGES.entries, PINNED_PAGES.bytes, (p) => p.bytes)

  app.get(
    '/v2/history/get_actions',
    {
      schema: {
        summary: "Actions matching Hyperion's filters, one document per action (notifications folded into receipts)",
        tags: ['hyperion'],
        // No additionalProperties: false: Hyperion's free filters are the query's other keys.
        querystring: Type.Object({
          account: Type.Optional(NAME),
          filter: Type.Optional(Type.String({ minLength: 3, maxLength: 2_000 })),
          skip: Type.Optional(UINT),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
          sort: Type.Optional(
            Type.Union([Type.Literal('desc'), Type.Literal('asc'), Type.Literal('1'), Type.Literal('-1')]),
          ),
          after: Type.Optional(Type.String({ maxLength: 64 })),
          before: Type.Optional(Type.String({ maxLength: 64 })),
          track: Type.Optional(Type.String({ maxLength: 16 })),
          simple: Type.Optional(Type.Boolean()),
          noBinary: Type.Optional(Type.Boolean()),
          checkLib: Type.Optional(Type.Boolean()),
          hot_only: Type.Optional(Type.Boolean()),
          sortedBy: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: {
          200: withEnvelope({
            hot_only: Type.Optional(Type.Boolean()),
            actions: Type.Optional(Type.Array(ACTION)),
            simple_actions: Type.Optional(Type.Array(SIMPLE_ACTION)),
          }),
        },
      },
    },
    async (request) => {
      const query = request.query
      const skip = query.skip ?? 0
      const limit = query.limit ?? 10
      if (skip > MAX_SKIP)
        throw HyperionBadRequestError(
          `skip is above maximum internal limit: ${MAX_SKIP}. Use after/before or a global_sequence range to page further`,
        )
      if (limit > HYPERION_LIMITS.get_actions)
        throw HyperionBadRequestError(`limit too big, maximum: ${HYPERION_LIMITS.get_actions}`)
      // Every other key of the query string (the free filters) as sent, besides what the schema coerced.
      const plan = planActionQuery({ ...(request.query as Record<string, unknown>) })
      const key = pinnedKey(request.query as Record<string, unknown>)
      const hit = query.checkLib || 'ignoreCache' in request.query ? undefined : pinned.get(key)
      const page =
        hit?.page ??
        (await searchActionDocuments(store, decoders, {
          plan,
          direction: query.sort === 'asc' || query.sort === '1' ? 'forward' : 'backward',
          skip,
          limit,
          countCap: countCap(query.track),
          documents: { noBinary: query.noBinary },
        }))
      if (
        !hit &&
        !query.checkLib &&
        page.position &&
        page.highBlock !== undefined &&
        page.highBlock <= page.position.lib
      )
        pinned.set(key, { page, bytes: JSON.stringify(page.documents).length })
      const documents = page.documents
      const lib = query.checkLib ? (page.position?.lib ?? 0) : 0
      return {
        lib,
        ...(hit ? { cached: true } : {}),
        ...(query.hot_only ? { hot_only: true } : {}),
        ...(page.total ? { total: page.total } : {}),
        ...(query.simple
          ? { simple_actions: documents.map((d) => simpleAction(d, query.checkLib ? lib : undefined)) }
          : { actions: documents as never[] }),
      }
    },
  )

  app.get(
    '/v2/history/get_transaction',
    {
      schema: {
        summary: "A transaction's actions in its current block (never a forked-out one), uint64s as strings",
        tags: ['hyperion'],
        querystring: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 128 }),
          block_hint: Type.Optional(UINT),
        }),
      },
    },
    async (request) => {
      const id = request.query.id.toLowerCase()
      if (!/^[0-9a-f]{64}$/.test(id))
        throw HyperionBadRequestError('invalid transaction id: 64 hexadecimal digits expected')
      const found = await transactionDocuments(store, decoders, id)
      const lib = found.position?.lib ?? 0
      if (!found.documents.length) return { executed: false, trx_id: id, lib, cached_lib: false }
      return { executed: true, trx_id: id, lib, cached_lib: false, actions: found.documents }
    },
  )

  app.get(
    '/v2/history/check_transaction',
    {
      schema: {
        summary: 'Whether a transaction executed, was forked out, or is unknown',
        tags: ['hyperion'],
        querystring: Type.Object({ id: Type.String({ minLength: 64, maxLength: 64 }) }),
      },
    },
    async (request) => checkTransaction(store, decoders, request.query.id.toLowerCase()),
  )

  app.get(
    '/v2/history/get_creator',
    {
      schema: {
        summary: 'Who created an account, when, and in which transaction',
        tags: ['hyperion'],
        querystring: Type.Object({ account: NAME }),
        response: {
          200: withEnvelope({
            account: Type.String(),
            creator: Type.String(),
            timestamp: Type.String(),
            block_num: Type.Number(),
            trx_id: Type.String(),
          }),
        },
      },
    },
    async (request) => {
      const creation = await creatorOf(store, decoders, request.query.account)
      if (!creation) throw HyperionNotFoundError('account creation not found')
      return creation
    },
  )

  app.get(
    '/v2/history/get_created_accounts',
    {
      schema: {
        summary: 'The accounts an account created, newest first',
        tags: ['hyperion'],
        querystring: Type.Object({
          account: NAME,
          skip: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SKIP })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: HYPERION_LIMITS.get_created_accounts })),
        }),
        response: {
          200: withEnvelope({
            accounts: Type.Array(Type.Object({ name: Type.String(), timestamp: Type.String(), trx_id: Type.String() })),
          }),
        },
      },
    },
    async (request) =>
      createdAccounts(store, decoders, {
        account: request.query.account,
        skip: request.query.skip ?? 0,
        limit: request.query.limit ?? 100,
      }),
  )
}
