import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AbiCache } from '../../antelope/index.ts'
import {
  hyperionAbiSnapshot,
  hyperionBlock,
  hyperionBlocks,
  hyperionDeltas,
  hyperionSchedule,
  hyperionTableState,
} from '../../hyperion/index.ts'
import { createBlockDecoderSource } from '../../lifecycle/index.ts'
import type { HyperionRouteOptions } from './index.ts'

/** A comma list of names (Hyperion's `a,b` → any of); the domain code bounds how many values it takes. */
const NameList = Type.Optional(Type.String({ maxLength: 400 }))
const Name = Type.String({ minLength: 1, maxLength: 13 })
const BlockNum = Type.Integer({ minimum: 1, maximum: 2 ** 32 - 1 })
const Skip = Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 }))
const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 }))
const Sort = Type.Optional(
  Type.Union([Type.Literal('asc'), Type.Literal('desc'), Type.Literal('1'), Type.Literal('-1')]),
)
const TimeOrBlock = Type.Optional(Type.String({ maxLength: 40 }))
const TrxCount = Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1 }))

// No `additionalProperties: false`: Hyperion keeps unknown keys (get_deltas reads them as filters and refuses those it
// does not index; the other routes ignore them).
const DeltasQuery = Type.Object({
  code: NameList,
  scope: NameList,
  table: NameList,
  payer: NameList,
  present: Type.Optional(Type.Integer({ minimum: 0, maximum: 1 })),
  primary_key: Type.Optional(Type.String({ maxLength: 500 })),
  block_num: Type.Optional(Type.String({ maxLength: 300 })),
  block_id: Type.Optional(Type.String({ maxLength: 64 })),
  after: TimeOrBlock,
  before: TimeOrBlock,
  limit: Limit,
  skip: Skip,
  sort: Sort,
})

const TableStateQuery = Type.Object({
  code: Name,
  table: Name,
  block_num: Type.Optional(BlockNum),
  after_key: Type.Optional(Type.String({ maxLength: 40 })),
})

const AbiSnapshotQuery = Type.Object({
  contract: Type.String({ minLength: 1, maxLength: 12 }),
  block: Type.Optional(BlockNum),
  fetch: Type.Optional(Type.Boolean()),
})

const BlockQuery = Type.Object({ block_num: BlockNum })

const BlocksQuery = Type.Object({
  block_num: Type.Optional(BlockNum),
  block_id: Type.Optional(Type.String({ maxLength: 64 })),
  producer: NameList,
  trx_count: TrxCount,
  min_trx_count: TrxCount,
  max_trx_count: TrxCount,
  after: TimeOrBlock,
  before: TimeOrBlock,
  limit: Limit,
  skip: Skip,
  sort: Sort,
})

const ScheduleQuery = Type.Object({
  mode: Type.Optional(Type.String({ maxLength: 20 })),
  version: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1 })),
  producer: Type.Optional(Name),
  key: Type.Optional(Type.String({ maxLength: 256 })),
  sort: Sort,
  after: TimeOrBlock,
  before: TimeOrBlock,
})

/**
 * /v2/history/get_deltas, get_table_state, get_abi_snapshot, get_block, get_blocks, get_schedule (docs/HYPERION.md):
 * the store's row versions, contract state, ABIs and block headers in Hyperion's shapes. A skip above 10,000 is
 * refused in the handlers with Hyperion's sentence.
 */
export const historyTableRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async (app, { hyperion }) => {
  const { store } = hyperion
  const abis = new AbiCache(64)
  const decoders = createBlockDecoderSource(store)

  app.get('/v2/history/get_deltas', { schema: { querystring: DeltasQuery } }, async (request) =>
    hyperionDeltas(store, decoders, request.query as Record<string, unknown>),
  )

  app.get('/v2/history/get_table_state', { schema: { querystring: TableStateQuery } }, async (request) =>
    hyperionTableState(store, abis, request.query),
  )

  app.get('/v2/history/get_abi_snapshot', { schema: { querystring: AbiSnapshotQuery } }, async (request) =>
    hyperionAbiSnapshot(store, abis, request.query),
  )

  app.get('/v2/history/get_block', { schema: { querystring: BlockQuery } }, async (request) =>
    hyperionBlock(store, request.query.block_num),
  )

  app.get('/v2/history/get_blocks', { schema: { querystring: BlocksQuery } }, async (request) =>
    hyperionBlocks(store, request.query),
  )

  app.get('/v2/history/get_schedule', { schema: { querystring: ScheduleQuery } }, async (request) =>
    hyperionSchedule(store, request.query),
  )
}
