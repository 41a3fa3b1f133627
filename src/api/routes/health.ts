import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { firstStoredBlock } from '../../state/index.ts'
import type { BlockReader, StorePosition } from '../../store/index.ts'
import { errorResponses } from '../schemas.ts'

/** What `/healthz` reads. */
export interface HealthSource {
  readonly storeKind: 'sqlite' | 'postgres'
  readonly store: { position(): Promise<StorePosition | undefined> } & Pick<BlockReader, 'blockByNum'>
  /**
   * The chain's head block number (get_info, cached by the caller); undefined when no chain API is configured or it
   * does not answer.
   */
  chainHead?(): Promise<number | undefined>
}

/** The lowest stored block, remembered: it only changes if history is pruned. */
function firstBlockFinder(store: HealthSource['store']): (high: number) => Promise<number | undefined> {
  let first: number | undefined
  return async (high) => {
    if (first !== undefined && (await store.blockByNum(first))) return first
    first = await firstStoredBlock(store, high)
    return first
  }
}

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('empty')], {
    description: 'empty: the store holds no block yet',
  }),
  store: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  head_block_num: Type.Union([Type.Integer(), Type.Null()]),
  head_block_id: Type.Union([Type.String(), Type.Null()]),
  last_irreversible_block_num: Type.Union([Type.Integer(), Type.Null()]),
  first_block_num: Type.Union([Type.Integer(), Type.Null()], {
    description: 'lowest stored block: the covered range is first_block_num..head_block_num',
  }),
  chain_head_block_num: Type.Union([Type.Integer(), Type.Null()], {
    description: 'null without a reachable chain API',
  }),
  lag_blocks: Type.Union([Type.Integer(), Type.Null()], { description: 'chain head minus stored head' }),
})

/**
 * `GET /healthz`: head, LIB, lag behind the chain, covered block range, store kind. Always 200 while the process
 * serves.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<{ health: HealthSource }> = async (app, { health }) => {
  const firstBlock = firstBlockFinder(health.store)
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: { summary: 'Store head, LIB, lag and covered range', response: { 200: Health, ...errorResponses } },
    },
    async () => {
      const [position, chainHead] = await Promise.all([
        health.store.position(),
        health.chainHead?.() ?? Promise.resolve(undefined),
      ])
      const head = position?.head.blockNum ?? null
      return {
        status: position ? ('ok' as const) : ('empty' as const),
        store: health.storeKind,
        head_block_num: head,
        head_block_id: position?.head.blockId ?? null,
        last_irreversible_block_num: position?.lib ?? null,
        first_block_num: position
          ? ((await firstBlock(
              position.lib > 0 ? Math.min(position.lib, position.head.blockNum) : position.head.blockNum,
            )) ?? null)
          : null,
        chain_head_block_num: chainHead ?? null,
        lag_blocks: chainHead !== undefined && head !== null ? Math.max(0, chainHead - head) : null,
      }
    },
  )
}
