import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AuthService } from '../../auth/index.ts'
import { errorResponses } from '../schemas.ts'

/** `POST /v1/auth/issue` and `/.well-known/jwks.json`: API key → JWT, and the key that verifies it. */
export const authIssueRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, opts) => {
  app.post(
    '/v1/auth/issue',
    {
      config: { public: true },
      schema: {
        summary: 'Exchange an API key for a JWT',
        description:
          'Accepts a JSON body whatever the Content-Type (@dfuse/client sends text/plain). Rate-limited per IP and per key; strictest for server keys.',
        body: Type.Object({ api_key: Type.String({ maxLength: 256 }) }),
        response: {
          200: Type.Object({ token: Type.String(), expires_at: Type.Integer({ description: 'UNIX seconds' }) }),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { issued, rate, type, keyId } = await opts.auth.issue({
        apiKey: request.body.api_key,
        caller: { ip: request.ip, origin: request.headers.origin },
      })
      app.metrics.tokensIssued.inc({ type })
      request.usageKeyId = keyId
      reply
        .header('x-ratelimit-limit', String(rate.limit))
        .header('x-ratelimit-remaining', String(rate.remaining))
        .header('x-ratelimit-reset', String(Math.ceil(rate.resetAtMs / 1000)))
      reply.header('cache-control', 'no-store')
      return issued
    },
  )
  app.get(
    '/.well-known/jwks.json',
    {
      config: { public: true },
      schema: {
        summary: 'The public key tokens are signed with (ES256)',
        response: {
          200: Type.Object({
            keys: Type.Array(
              Type.Object({
                kty: Type.String(),
                crv: Type.String(),
                x: Type.String(),
                y: Type.String(),
                kid: Type.String(),
                alg: Type.String(),
                use: Type.String(),
              }),
            ),
          }),
          ...errorResponses,
        },
      },
    },
    async () => opts.auth.jwks,
  )
}
