import type { FastifyPluginAsync } from 'fastify'

/** GraphiQL at `/graphiql`, every asset served by Antler (no CDN). Being built: no route yet. */
export const graphiqlRoutes: FastifyPluginAsync = async () => undefined
