import { readFile } from 'node:fs/promises'
import type { FastifyPluginAsync } from 'fastify'
import { GRAPHQL_PROTO_PATH } from '../../graphql/index.ts'

/** `GET /graphql/graphql.proto`: the gRPC service's proto file, for clients that load it at run time (public). */
export const graphqlProtoRoutes: FastifyPluginAsync = async (app) => {
  const proto = await readFile(GRAPHQL_PROTO_PATH, 'utf8')
  app.get(
    '/graphql/graphql.proto',
    { config: { public: true }, schema: { summary: 'The GraphQL-over-gRPC proto file', hide: true } },
    async (_request, reply) => reply.type('text/plain; charset=utf-8').send(proto),
  )
}
