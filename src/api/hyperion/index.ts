import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { AuthService } from '../../auth/index.ts'
import type { HyperionServices } from '../../hyperion/index.ts'
import { errorHandlerWith, sendError } from '../plugins/errors.ts'
import { NotFoundError } from '../errors.ts'
import { hyperionAccess } from './access.ts'
import { addEnvelope } from './envelope.ts'
import { renderHyperionError } from './render-error.ts'
import { historyActionRoutes } from './history-actions.ts'
import { historyTableRoutes } from './history-tables.ts'
import { v1HistoryRoutes } from './v1-history.ts'
import { traceApiRoutes } from './trace-api.ts'
import { stateRoutes } from './state.ts'
import { miscRoutes } from './misc.ts'

/** What every Hyperion route plugin is registered with. */
export interface HyperionRouteOptions {
  readonly hyperion: HyperionServices
}

/** The path prefixes that are Hyperion's: errors and unknown routes under them answer in Hyperion's shape. */
export const HYPERION_PREFIXES = ['/v2', '/v1/history', '/v1/trace_api'] as const

/**
 * Hyperion's API beside dfuse's (docs/HYPERION.md): `/v2/*`, `/v1/history/*`, `/v1/trace_api/*`, each answer with
 * Hyperion's envelope and errors in its shape, public with a per-IP limit unless `requireToken`.
 */
export const hyperionRoutes: FastifyPluginAsync<{
  hyperion: HyperionServices
  auth: AuthService
  requireToken: boolean
}> = async (app, opts) => {
  const render = errorHandlerWith(renderHyperionError)
  for (const prefix of HYPERION_PREFIXES)
    await app.register(
      async (scope: FastifyInstance) => {
        scope.setNotFoundHandler((request, reply) =>
          sendError(request, reply, NotFoundError({ path: request.url.split('?')[0] }), renderHyperionError),
        )
      },
      { prefix },
    )
  await app.register(async (scope: FastifyInstance) => {
    scope.setErrorHandler(render)
    hyperionAccess(scope, { auth: opts.auth, requireToken: opts.requireToken })
    addEnvelope(scope, opts.hyperion.store)
    const routeOptions: HyperionRouteOptions = { hyperion: opts.hyperion }
    await scope.register(historyActionRoutes, routeOptions)
    await scope.register(historyTableRoutes, routeOptions)
    await scope.register(v1HistoryRoutes, routeOptions)
    await scope.register(traceApiRoutes, routeOptions)
    await scope.register(stateRoutes, routeOptions)
    await scope.register(miscRoutes, routeOptions)
  })
}
