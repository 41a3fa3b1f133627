import type { FastifyPluginAsync } from 'fastify'

/** `GET /openapi.json`: the OpenAPI document generated from the route schemas. */
export const openApiRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    '/openapi.json',
    {
      config: { public: true },
      schema: { hide: true, response: { 200: { type: 'object', additionalProperties: true } } },
    },
    async () => app.swagger(),
  )
}
