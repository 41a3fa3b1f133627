import type { FastifyInstance } from 'fastify'
import { isChecksum256 } from '../../antelope/index.ts'
import type { ChainApiDeps } from '../chain-api.ts'
import { chainErrors } from '../errors.ts'
import type { StoredBlock } from '../storage/block-log.ts'
import { asBody } from './request.ts'

/**
 * The devchain's own controls (no nodeos counterpart), POST only: `/v1/devchain/finality` stalls or
 * resumes finality, `/v1/devchain/produce` produces blocks now, `/v1/devchain/fork` replaces the
 * last `depth` blocks with a longer branch that re-includes their transactions except those in `drop`.
 */
export function controlRoutes(app: FastifyInstance, deps: ChainApiDeps): void {
  const { chain } = deps
  const headJson = (b: StoredBlock) => ({ block_num: b.num, block_id: b.id })
  app.post('/v1/devchain/finality', async (req) => {
    const body = asBody(req.body)
    if (typeof body.stall !== 'boolean') throw chainErrors.badRequest('stall must be true or false')
    chain.setFinalityStalled(body.stall)
    return {
      stalled: body.stall,
      head: headJson(chain.head),
      last_irreversible: { block_num: chain.lib.blockNum, block_id: chain.lib.blockId },
    }
  })
  app.post('/v1/devchain/produce', async (req) => {
    const body = asBody(req.body)
    const blocks = body.blocks === undefined ? 1 : body.blocks
    if (typeof blocks !== 'number' || !Number.isInteger(blocks) || blocks < 1 || blocks > 10_000)
      throw chainErrors.badRequest('blocks must be an integer from 1 to 10000')
    return { head: headJson(deps.produce(blocks)) }
  })
  app.post('/v1/devchain/fork', async (req) => {
    const body = asBody(req.body)
    const depth = body.depth
    const drop = body.drop ?? []
    if (typeof depth !== 'number') throw chainErrors.badRequest('depth must be a number')
    if (!Array.isArray(drop) || !drop.every((d) => typeof d === 'string' && isChecksum256(d)))
      throw chainErrors.badRequest('drop must be a list of transaction ids')
    return deps.fork(depth, drop as string[])
  })
}
