import { defineError, type NoDetails } from '../error-definition.ts'

/** Where a request parameter is refused: the parameter and its sentences (dfuse's `details.errors`). */
type ParamErrors = Record<string, string[]>

/**
 * What a `request_validation_error` is raised with: the failing parameters with their sentences, or a search query
 * or cursor refused at a position or for a reason (dfuse answered both with this code, the reason as message).
 */
export type RequestValidationArgs =
  | { readonly errors: ParamErrors }
  | {
      readonly param: 'q'
      readonly query: string
      readonly position: number
      readonly reason: string
      /** The request's name for the query where it is not `q` (webhooks: `query`). */
      readonly field?: string
    }
  | { readonly param: 'cursor'; readonly reason: string; readonly field?: string }

/** A query longer than this is cut in the message (with `…`). */
const QUOTED_QUERY_CHARS = 200

function requestValidationMessage(args: RequestValidationArgs): string {
  if (!('param' in args)) return 'The request is invalid.'
  if (args.param === 'cursor') return `invalid cursor: ${args.reason}`
  const query = args.query.length > QUOTED_QUERY_CHARS ? `${args.query.slice(0, QUOTED_QUERY_CHARS)}…` : args.query
  return `invalid query: ${args.reason} at position ${args.position} (query: ${JSON.stringify(query)})`
}

function requestValidationDetails(args: RequestValidationArgs): {
  errors: ParamErrors
  position?: number
  reason?: string
} {
  if (!('param' in args)) return { errors: args.errors }
  if (args.param === 'cursor')
    return { errors: { [args.field ?? 'cursor']: [`The cursor is invalid: ${args.reason}.`] }, reason: args.reason }
  const field = args.field ?? 'q'
  const sentence = `The ${field} field is invalid: ${args.reason} at position ${args.position}.`
  return { errors: { [field]: [sentence] }, position: args.position, reason: args.reason }
}

/** Why `/readyz` fails, and what it saw (`null`: unknown, e.g. no chain API or an unreachable database). */
export interface NotReady {
  reason: 'database_unreachable' | 'indexer_stopped' | 'empty_store' | 'lagging'
  head_block_num: number | null
  chain_head_block_num: number | null
  lag_blocks: number | null
  max_lag_blocks: number | null
  /** The in-process indexer's error once it stopped (`antler dev`/`serve`); absent where the indexer runs elsewhere. */
  indexer_error?: { code: string | null; message: string }
  /** The database's error, when it is unreachable. */
  database_error?: string
}

function notReadyMessage(d: NotReady): string {
  switch (d.reason) {
    case 'database_unreachable':
      return `Not ready: the store's database is unreachable (${d.database_error ?? 'no answer'}).`
    case 'indexer_stopped':
      return `Not ready: the indexer stopped: ${d.indexer_error?.message ?? 'unknown error'}`
    case 'empty_store':
      return 'Not ready: the store holds no block yet.'
    case 'lagging':
      return `Not ready: the store lags the chain by ${d.lag_blocks} blocks, more than ${d.max_lag_blocks} (--max-lag-blocks).`
  }
}

/** The codes of HTTP itself and of request validation, shared by every route. */
export const HTTP_ERRORS = {
  request_validation_error: defineError<ReturnType<typeof requestValidationDetails>, RequestValidationArgs>({
    status: 400,
    message: requestValidationMessage,
    details: requestValidationDetails,
  }),
  invalid_json_error: defineError<{ errors: { source: string[] } }, { reason: string }>({
    status: 400,
    message: () => 'The request body is not valid JSON.',
    details: ({ reason }) => ({ errors: { source: [reason] } }),
  }),
  missing_body_error: defineError<NoDetails>({ status: 400, message: () => 'The request needs a body.' }),
  request_too_large_error: defineError<{ limit_bytes: number }>({
    status: 413,
    message: (d) => `The request body is larger than ${d.limit_bytes} bytes.`,
  }),
  unsupported_media_type_error: defineError<{ content_type: string }>({
    status: 415,
    message: (d) => `Content-Type ${JSON.stringify(d.content_type)} is not supported here.`,
  }),
  unsupported_content_encoding_error: defineError<{ content_encoding: string }>({
    status: 415,
    message: (d) => `Content-Encoding ${JSON.stringify(d.content_encoding)} is not supported here.`,
  }),
  ws_upgrade_failed_error: defineError<{ reason: string }>({
    status: 400,
    message: (d) => `The WebSocket upgrade failed: ${d.reason}.`,
  }),
  not_found_error: defineError<{ path: string }>({ status: 404, message: (d) => `Nothing is served at ${d.path}.` }),
  method_not_allowed_error: defineError<{ method: string; allowed: string[] }>({
    status: 405,
    message: (d) => `${d.method} is not allowed here; use ${d.allowed.join(' or ')}.`,
  }),
  bad_request_error: defineError<{ reason: string }>({ status: 400, message: () => 'The HTTP request is malformed.' }),
  request_header_too_large_error: defineError<NoDetails>({
    status: 431,
    message: () => 'The request headers are too large.',
  }),
  service_unavailable_error: defineError<{ reason: string; attempts?: number }>({
    status: 503,
    retryable: true,
    message: (d) =>
      d.attempts === undefined
        ? `The service is unavailable: ${d.reason}.`
        : `The service is unavailable: ${d.reason}, ${d.attempts} times in a row; retry.`,
  }),
  api_not_ready_error: defineError<NotReady>({ status: 503, retryable: true, message: notReadyMessage }),
  unexpected_error: defineError<NoDetails>({ status: 500, message: () => 'An unexpected error occurred.' }),
} as const
