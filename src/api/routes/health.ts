import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AntlerError, type NotReady } from '../../antelope/index.ts'
import { firstStoredBlock } from '../../state/index.ts'
import type { BlockReader, StorePosition } from '../../store/index.ts'
import { recentAnswer } from '../recent-answer.ts'
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
  /**
   * Changes whenever the store's position may have (the live hub's last step): `/healthz` reads the store again at
   * once then, else at most once a second.
   */
  positionStamp?(): number
  /** What `/readyz` judges besides the store (absent: the lag is not judged, no indexer in the process). */
  readonly readiness?: Readiness
}

/** `/readyz`'s limits and, when the indexer shares the process, its state. */
export interface Readiness {
  /** The most blocks the store may trail the chain's head (`--max-lag-blocks`). */
  readonly maxLagBlocks?: number
  /** The in-process indexer's error once it stopped; undefined while it runs (or where it runs elsewhere). */
  indexerFailure?(): { readonly code?: string; readonly message: string } | undefined
}

/** How long `/readyz` waits for the database before it calls it unreachable. */
const DATABASE_TIMEOUT_MS = 2000

/** The store's position, or why it could not be read within DATABASE_TIMEOUT_MS. */
async function positionWithin(
  store: HealthSource['store'],
): Promise<{ position: StorePosition | undefined } | { error: string }> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<{ error: string }>((resolve) => {
    timer = setTimeout(() => resolve({ error: `no answer within ${DATABASE_TIMEOUT_MS} ms` }), DATABASE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([
      store.position().then(
        (position) => ({ position }),
        (error: unknown) => ({ error: (error as Error).message || String(error) }),
      ),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}

const Ready = Type.Object({
  status: Type.Literal('ready'),
  head_block_num: Type.Integer(),
  chain_head_block_num: Type.Union([Type.Integer(), Type.Null()], {
    description: 'null without a reachable chain API (the lag is then not judged)',
  }),
  lag_blocks: Type.Union([Type.Integer(), Type.Null()], { description: 'chain head minus stored head' }),
  max_lag_blocks: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the lag is not judged' }),
})

/** How long the lowest stored block is trusted before `/healthz` checks it is still stored. */
const FIRST_BLOCK_RECHECK_MS = 1000

/**
 * The lowest stored block, remembered: it only changes if history is pruned, so it is checked at most once a second
 * (one store read fewer on almost every `/healthz`).
 */
function firstBlockFinder(store: HealthSource['store']): (high: number) => Promise<number | undefined> {
  let first: number | undefined
  let checkedAt = 0
  return async (high) => {
    if (first !== undefined && Date.now() - checkedAt < FIRST_BLOCK_RECHECK_MS) return first
    if (first === undefined || !(await store.blockByNum(first))) first = await firstStoredBlock(store, high)
    checkedAt = Date.now()
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
 * `GET /healthz`: head, LIB, lag behind the chain, covered block range, store kind (as of the live hub's last step).
 * Always 200 while the process serves.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<{ health: HealthSource }> = async (app, { health }) => {
  const healthAnswer = healthAnswerOf(health)
  const maxLagBlocks = health.readiness?.maxLagBlocks ?? null
  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        summary: 'Ready to serve: database reachable, indexer running, store within --max-lag-blocks of the chain',
        response: { 200: Ready, ...errorResponses },
      },
    },
    async () => {
      const [read, chainHead] = await Promise.all([
        positionWithin(health.store),
        health.chainHead?.() ?? Promise.resolve(undefined),
      ])
      const failure = health.readiness?.indexerFailure?.()
      const head = 'position' in read ? (read.position?.head.blockNum ?? null) : null
      const lag = chainHead !== undefined && head !== null ? Math.max(0, chainHead - head) : null
      const seen: Omit<NotReady, 'reason'> = {
        head_block_num: head,
        chain_head_block_num: chainHead ?? null,
        lag_blocks: lag,
        max_lag_blocks: maxLagBlocks,
        ...(failure ? { indexer_error: { code: failure.code ?? null, message: failure.message } } : {}),
        ...('error' in read ? { database_error: read.error } : {}),
      }
      const reason: NotReady['reason'] | undefined =
        'error' in read
          ? 'database_unreachable'
          : failure
            ? 'indexer_stopped'
            : head === null
              ? 'empty_store'
              : lag !== null && maxLagBlocks !== null && lag > maxLagBlocks
                ? 'lagging'
                : undefined
      if (reason || head === null)
        throw new AntlerError('api_not_ready_error', { reason: reason ?? 'empty_store', ...seen })
      return { status: 'ready' as const, ...seen, head_block_num: head }
    },
  )
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: { summary: 'Store head, LIB, lag and covered range', response: { 200: Health, ...errorResponses } },
    },
    healthAnswer,
  )
}

/**
 * How long one `/healthz` answer serves every request while the position stamp stays: without a stamp, a tenth of a
 * second (ten store reads a second at most); with one, a second (the stamp says when the store moved).
 */
const HEALTH_ANSWER_TTL_MS = { stamped: 1_000, unstamped: 100 }

/** `/healthz`'s answer, built again when the position stamp changes or the answer is too old. */
function healthAnswerOf(health: HealthSource) {
  const firstBlock = firstBlockFinder(health.store)
  const ttl = health.positionStamp ? HEALTH_ANSWER_TTL_MS.stamped : HEALTH_ANSWER_TTL_MS.unstamped
  const stamp = health.positionStamp?.bind(health)
  return recentAnswer(
    ttl,
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
    stamp,
  )
}
