import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AbiCache } from '../../antelope/index.ts'
import { HYPERION_LIMITS, proposalsAt, voterScopesAt, votersAt } from '../../hyperion/index.ts'
import type { HyperionRouteOptions } from './index.ts'
import { withEnvelope } from './envelope.ts'
import { commaList, Flag, readAtHead, Limit, Name, pageSize, Skip, textFlag } from './state-params.ts'

/** Up to 30 names, comma separated. */
const NameList = Type.Optional(Type.String({ maxLength: 13 * 30 + 29 }))

/** /v2/state/get_voters, get_voter_scopes, get_proposals: the system contract's and eosio.msig's tables at head. */
export const stateSystemRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async (app, { hyperion }) => {
  const { store } = hyperion
  const abis = new AbiCache(64)

  app.get(
    '/v2/state/get_voters',
    {
      schema: {
        summary: "The system contract's voters at head (empty on a chain without one)",
        tags: ['hyperion'],
        querystring: Type.Object({
          producer: NameList,
          is_proxy: Type.Optional(Type.String({ maxLength: 8 })),
          listProducers: Type.Optional(Type.String({ maxLength: 8 })),
          limit: Limit,
          skip: Skip,
        }),
      },
    },
    async (request) => {
      const q = request.query
      const skip = q.skip ?? 0
      const limit = pageSize(q.limit, 50, HYPERION_LIMITS.get_voters)
      const voters = await readAtHead(store, [], async (reader, head) => {
        return votersAt(reader, abis, {
          blockNum: head,
          producers: commaList(q.producer) ?? [],
          isProxy: q.is_proxy === 'true',
          listProducers: q.listProducers === 'true',
        })
      })
      return { voter_count: voters.length, voters: voters.slice(skip, skip + limit) }
    },
  )

  app.get(
    '/v2/state/get_voter_scopes',
    {
      schema: {
        summary: 'Voters whose name holds a term (10 at most)',
        tags: ['hyperion'],
        querystring: Type.Object({ term: Type.String({ minLength: 1, maxLength: 12 }) }),
        response: { 200: withEnvelope({ scopes: Type.Array(Type.String()) }) },
      },
    },
    async (request) => ({
      scopes: await readAtHead(store, [], (reader, head) =>
        voterScopesAt(reader, abis, { blockNum: head, term: request.query.term, limit: 10 }),
      ),
    }),
  )

  app.get(
    '/v2/state/get_proposals',
    {
      schema: {
        summary: "eosio.msig's pending proposals at head (empty on a chain without it)",
        tags: ['hyperion'],
        querystring: Type.Object({
          proposer: Type.Optional(Name()),
          proposal: Type.Optional(Name()),
          account: NameList,
          requested: NameList,
          provided: NameList,
          executed: Flag,
          expired: Type.Optional(Type.String({ maxLength: 8 })),
          limit: Limit,
          skip: Skip,
        }),
      },
    },
    async (request) => {
      const q = request.query
      const skip = q.skip ?? 0
      const limit = pageSize(q.limit, 50, HYPERION_LIMITS.get_proposals)
      const proposals = await readAtHead(store, [], async (reader, head) => {
        return proposalsAt(reader, abis, {
          blockNum: head,
          nowMs: Date.now(),
          filter: {
            proposer: q.proposer,
            proposal: q.proposal,
            accounts: commaList(q.account),
            requested: commaList(q.requested),
            provided: commaList(q.provided),
            executed: q.executed,
            expired: textFlag(q.expired),
          },
        })
      })
      return { total: { value: proposals.length, relation: 'eq' }, proposals: proposals.slice(skip, skip + limit) }
    },
  )
}
