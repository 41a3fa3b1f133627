import {
  Type,
  type FastifyPluginAsyncTypebox,
  type Static,
  type TypeBoxTypeProvider,
} from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Compile } from 'typebox/compile'
import { parseTime } from '../../antelope/index.ts'
import type { StateService } from '../../state/index.ts'
import { MissingBodyError, RequestValidationError, UnsupportedMediaTypeError } from '../errors.ts'
import { errorResponses } from '../schemas.ts'
import {
  checkBlockNum,
  isTrue,
  listedNameParam,
  nameListParam,
  nameParam,
  P,
  primaryKeyParam,
  publicKeyParam,
  rowFormat,
  scopeParam,
  servedRows,
} from './state-params.ts'

const Row = Type.Object({
  key: Type.String(),
  payer: Type.Optional(Type.String()),
  json: Type.Optional(Type.Unknown()),
  hex: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  block: Type.Optional(Type.Integer({ description: "block of the row's last change (with_block_num)" })),
})
const Header = {
  up_to_block_id: Type.Optional(
    Type.String({ description: 'present when the height is reversible: the block whose chain this view is' }),
  ),
  up_to_block_num: Type.Optional(Type.Integer()),
  last_irreversible_block_id: Type.String(),
  last_irreversible_block_num: Type.Integer(),
}
const MultiState = Type.Object({
  ...Header,
  tables: Type.Array(
    Type.Object({
      account: Type.String(),
      scope: Type.String(),
      abi: Type.Optional(Type.Unknown()),
      rows: Type.Array(Row),
    }),
  ),
})

const readParams = {
  block_num: P.blockNum,
  json: P.bool,
  key_type: P.keyType,
  with_block_num: P.bool,
  with_abi: P.bool,
  irreversible_only: P.bool,
}
const TableQuery = Type.Object({ account: P.name, scope: P.scope, table: P.name, ...readParams })
const TableRowQuery = Type.Object({
  account: P.name,
  scope: P.scope,
  table: P.name,
  primary_key: Type.String({ maxLength: 64 }),
  ...readParams,
})
const ScopesQuery = Type.Object({ account: P.name, scopes: P.names, table: P.name, ...readParams })
const AccountsQuery = Type.Object({ accounts: P.names, scope: P.scope, table: P.name, ...readParams })
const KeyAccountsQuery = Type.Object({ public_key: Type.String({ maxLength: 256 }), block_num: P.blockNum })
const BinToJsonBody = Type.Object({
  account: P.name,
  table: P.name,
  hex_rows: Type.Array(Type.String({ maxLength: 2 * 1024 * 1024, pattern: '^([0-9a-fA-F]{2})*$' }), {
    maxItems: 10_000,
  }),
  block_num: P.blockNum,
})
/**
 * bin_to_json's body checked as sent: Ajv's coercion would take `"hex_rows": "00"` for `["00"]`, `["a"]` for `"a"`,
 * `12` for `"12"`, `true` for 1.
 */
const binToJsonCheck = Compile(BinToJsonBody)

/** TypeBox's errors as dfuse's `{ "<field>": ["<sentence>", …] }`. */
function strictErrors(value: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const error of binToJsonCheck.Errors(value)) {
    const required = (error.params as { requiredProperties?: unknown }).requiredProperties
    if (Array.isArray(required)) {
      for (const field of required) (out[String(field)] ??= []).push(`The ${String(field)} field is required.`)
      continue
    }
    const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'body'
    ;(out[field] ??= []).push(`The ${field} field ${error.message}.`)
  }
  return out
}

const FORM = 'application/x-www-form-urlencoded'

/**
 * The POST forms read `application/x-www-form-urlencoded` bodies only (dfuse's); a request without a body is an empty
 * form.
 */
async function formBodyOnly(request: FastifyRequest, _reply: FastifyReply, payload: unknown) {
  const type = request.headers['content-type']
  const length = request.headers['content-length']
  const hasBody = request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0)
  if (hasBody && (type ?? '').split(';')[0].trim().toLowerCase() !== FORM)
    throw UnsupportedMediaTypeError({ contentType: type ?? '' })
  return payload
}
async function emptyForm(request: FastifyRequest) {
  if (request.body === undefined || request.body === null) request.body = {}
}

/** GET reads the query string, POST the form body (dfuse's two forms of the multi-table reads). */
const paramsOf = <T>(request: FastifyRequest): T => (request.method === 'POST' ? request.body : request.query) as T

const heightOf = (q: { block_num?: number; irreversible_only?: string }) => ({
  blockNum: q.block_num,
  irreversibleOnly: isTrue(q.irreversible_only),
})
const tableArgs = (q: Static<typeof TableQuery> | Static<typeof ScopesQuery> | Static<typeof AccountsQuery>) => ({
  format: rowFormat(q),
  withAbi: isTrue(q.with_abi),
  ...heightOf(q),
})

/** The state endpoints of dfuse (`/v0/state/*`) and `/v0/block_id/by_time`; every one needs a token. */
export const stateRoutes: FastifyPluginAsyncTypebox<{ state: StateService }> = async (app, opts) => {
  const { state } = opts
  // Before the schema: Ajv would coerce `block_num=1e3` to 1000.
  app.addHook('preValidation', async (request) =>
    checkBlockNum(request.method === 'POST' ? request.body : request.query),
  )

  app.get(
    '/v0/state/table',
    {
      schema: {
        summary: 'Rows of a contract table scope at any height',
        querystring: TableQuery,
        response: {
          200: Type.Object({ ...Header, abi: Type.Optional(Type.Unknown()), rows: Type.Array(Row) }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const q = request.query
      const answer = await state.table({
        account: nameParam('account', q.account),
        scope: scopeParam('scope', q.scope),
        table: nameParam('table', q.table),
        ...tableArgs(q),
      })
      request.documents = answer.rows.length
      return answer
    },
  )

  app.get(
    '/v0/state/table/row',
    {
      schema: {
        summary: 'One row by primary key at any height',
        querystring: TableRowQuery,
        response: { 200: Type.Object({ ...Header, row: Row }), ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query
      const format = rowFormat(q)
      const primaryKey = primaryKeyParam(q.primary_key, format.keyType)
      return state.tableRow({
        account: nameParam('account', q.account),
        scope: scopeParam('scope', q.scope),
        table: nameParam('table', q.table),
        primaryKey,
        keyText: q.primary_key,
        format,
        withAbi: false,
        ...heightOf(q),
      })
    },
  )

  for (const method of ['GET', 'POST'] as const) {
    const input = method === 'GET' ? 'querystring' : 'body'
    const form = method === 'POST' ? { preParsing: formBodyOnly, preValidation: emptyForm } : {}
    app.route({
      method,
      url: '/v0/state/tables/scopes',
      ...form,
      schema: {
        summary: 'Rows of one table for up to 1,500 scopes (POST: form-urlencoded)',
        [input]: ScopesQuery,
        response: { 200: MultiState, ...errorResponses },
      },
      handler: async (request) => {
        const q = paramsOf<Static<typeof ScopesQuery>>(request)
        return servedRows(
          request,
          await state.tablesForScopes({
            account: nameParam('account', q.account),
            scopes: nameListParam('scopes', q.scopes, scopeParam),
            table: nameParam('table', q.table),
            ...tableArgs(q),
          }),
        )
      },
    })
    app.route({
      method,
      url: '/v0/state/tables/accounts',
      ...form,
      schema: {
        summary: 'One table and scope across up to 1,500 accounts (POST: form-urlencoded)',
        [input]: AccountsQuery,
        response: { 200: MultiState, ...errorResponses },
      },
      handler: async (request) => {
        const q = paramsOf<Static<typeof AccountsQuery>>(request)
        return servedRows(
          request,
          await state.tablesForAccounts({
            accounts: nameListParam('accounts', q.accounts, listedNameParam),
            scope: scopeParam('scope', q.scope),
            table: nameParam('table', q.table),
            ...tableArgs(q),
          }),
        )
      },
    })
    app.route({
      method,
      url: '/v0/state/key_accounts',
      ...form,
      schema: {
        summary: 'Accounts controlled by a public key at any height',
        [input]: KeyAccountsQuery,
        response: {
          200: Type.Object({ block_num: Type.Integer(), account_names: Type.Array(Type.String()) }),
          ...errorResponses,
        },
      },
      handler: async (request) => {
        const q = paramsOf<Static<typeof KeyAccountsQuery>>(request)
        return state.keyAccounts({ publicKey: publicKeyParam(q.public_key), blockNum: q.block_num })
      },
    })
  }

  app.get(
    '/v0/state/table_scopes',
    {
      schema: {
        summary: 'Scopes of a table holding rows at any height',
        querystring: Type.Object({ account: P.name, table: P.name, block_num: P.blockNum }),
        response: {
          200: Type.Object({ block_num: Type.Integer(), scopes: Type.Array(Type.String()) }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      state.tableScopes({
        account: nameParam('account', request.query.account),
        table: nameParam('table', request.query.table),
        blockNum: request.query.block_num,
      }),
  )

  app.get(
    '/v0/state/permission_links',
    {
      schema: {
        summary: 'Permission links (linkauth) of an account at any height',
        querystring: Type.Object({ account: P.name, block_num: P.blockNum }),
        response: {
          200: Type.Object({
            ...Header,
            linked_permissions: Type.Array(
              Type.Object({
                contract: Type.String(),
                action: Type.String({ description: "'' links every action of the contract" }),
                permission_name: Type.String(),
              }),
            ),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      state.permissionLinks({
        account: nameParam('account', request.query.account),
        blockNum: request.query.block_num,
      }),
  )

  app.get(
    '/v0/state/abi',
    {
      schema: {
        summary: 'The ABI of an account at any height (json, or hex of the packed ABI)',
        querystring: Type.Object({ account: P.name, block_num: P.blockNum, json: P.bool }),
        response: {
          200: Type.Object({
            block_num: Type.Integer({ description: 'the block that set this ABI' }),
            account: Type.String(),
            abi: Type.Unknown(),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      state.abi({
        account: nameParam('account', request.query.account),
        blockNum: request.query.block_num,
        json: isTrue(request.query.json),
      }),
  )

  // A JSON body whatever its Content-Type, form encoding included (curl -d sends that): the form parser is not
  // inherited here.
  await app.register(async (child) => {
    child.removeContentTypeParser(FORM)
    child.withTypeProvider<TypeBoxTypeProvider>().post(
      '/v0/state/abi/bin_to_json',
      {
        schema: {
          summary: "Decode hex rows with the table type of an account's ABI at any height",
          body: BinToJsonBody,
          response: {
            200: Type.Object({
              block_num: Type.Integer(),
              account: Type.String(),
              table: Type.String(),
              rows: Type.Array(Type.Unknown()),
            }),
            ...errorResponses,
          },
        },
        preValidation: async (request) => {
          if (request.body === undefined) throw MissingBodyError()
          if (!binToJsonCheck.Check(request.body)) throw RequestValidationError({ errors: strictErrors(request.body) })
        },
      },
      async (request) => {
        const b = request.body
        return state.binToJson({
          account: nameParam('account', b.account),
          table: nameParam('table', b.table),
          hexRows: b.hex_rows,
          blockNum: b.block_num,
        })
      },
    )
  })

  app.get(
    '/v0/block_id/by_time',
    {
      schema: {
        summary: "The block closest to a time on the comparator's side",
        querystring: Type.Object({
          time: Type.String({ maxLength: 64 }),
          comparator: Type.Enum(['gt', 'gte', 'lt', 'lte', 'eq']),
        }),
        response: {
          200: Type.Object({ block: Type.Object({ id: Type.String(), num: Type.Integer(), time: Type.String() }) }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { time, comparator } = request.query
      let timeMs: number
      try {
        timeMs = parseTime(time)
      } catch {
        throw RequestValidationError({
          errors: { time: ['The time field must be an RFC 3339 time, e.g. 2019-03-04T10:36:14.500Z'] },
        })
      }
      return state.blockByTime({ timeMs, comparator: comparator as 'gt' | 'gte' | 'lt' | 'lte' | 'eq', timeText: time })
    },
  )
}
