import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DataTrxNotFoundError, type LifecycleService } from '../../lifecycle/index.ts'
import { RequestValidationError } from '../errors.ts'
import { errorResponses } from '../schemas.ts'

/**
 * The lifecycle's fields are many and nested (docs/API.md, `GET /v0/transactions/:id`): the schema names the top
 * level and keeps the rest as built.
 */
const Lifecycle = Type.Object(
  {
    transaction_status: Type.String({
      description: 'pending, delayed, canceled, expired, executed, soft_fail, hard_fail or forked_out',
    }),
    id: Type.String(),
    execution_irreversible: Type.Boolean(),
    creation_irreversible: Type.Boolean(),
    cancelation_irreversible: Type.Boolean(),
  },
  { additionalProperties: true },
)

/** `GET /v0/transactions/:id`: the lifecycle of a transaction, kept forever. */
export const transactionRoutes: FastifyPluginAsyncTypebox<{ lifecycle: LifecycleService }> = async (app, opts) => {
  app.get(
    '/v0/transactions/:id',
    {
      schema: {
        summary:
          'The lifecycle of a transaction: status, signed transaction, execution trace, deferred creation and cancelation',
        params: Type.Object({ id: Type.String({ maxLength: 1000 }) }),
        response: { 200: Lifecycle, ...errorResponses },
      },
    },
    async (request) => {
      const { id } = request.params
      if (!/^[0-9a-fA-F]{64}$/.test(id))
        throw RequestValidationError({
          errors: { id: ['The id field must be a transaction id: exactly 64 hexadecimal characters.'] },
        })
      const found = await opts.lifecycle.lifecycle(id.toLowerCase())
      if (!found) throw DataTrxNotFoundError({ trxId: id.toLowerCase() })
      return found
    },
  )
}
