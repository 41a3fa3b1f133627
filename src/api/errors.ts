import { AntlerError } from '../antelope/index.ts'

/** Bad parameters or body: `details.errors` maps each parameter to its problems (dfuse's shape). */
export function RequestValidationError(args: { errors: Record<string, string[]> }): AntlerError {
  return new AntlerError({
    code: 'request_validation_error',
    status: 400,
    message: 'The request is invalid.',
    details: { errors: args.errors },
  })
}

/** A body that is not JSON where JSON is expected. */
export function InvalidJsonError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'invalid_json_error',
    status: 400,
    message: 'The request body is not valid JSON.',
    details: { errors: { source: [args.reason] } },
  })
}

/** A route that needs a body got none. */
export function MissingBodyError(): AntlerError {
  return new AntlerError({ code: 'missing_body_error', status: 400, message: 'The request needs a body.' })
}

/** A body over the route's limit. */
export function RequestTooLargeError(args: { limitBytes: number }): AntlerError {
  return new AntlerError({
    code: 'request_too_large_error',
    status: 413,
    message: `The request body is larger than ${args.limitBytes} bytes.`,
    details: { limit_bytes: args.limitBytes },
  })
}

/** A body in a media type the route does not read. */
export function UnsupportedMediaTypeError(args: { contentType: string }): AntlerError {
  return new AntlerError({
    code: 'unsupported_media_type_error',
    status: 415,
    message: `Content-Type ${JSON.stringify(args.contentType)} is not supported here.`,
    details: { content_type: args.contentType },
  })
}

/** A body in a Content-Encoding the API does not decode (gzip, deflate and br are decoded). */
export function UnsupportedContentEncodingError(args: { contentEncoding: string }): AntlerError {
  return new AntlerError({
    code: 'unsupported_content_encoding_error',
    status: 415,
    message: `Content-Encoding ${JSON.stringify(args.contentEncoding)} is not supported here.`,
    details: { content_encoding: args.contentEncoding },
  })
}

/** A request's fields have the wrong JSON types (dfuse's typed decode step). */
export function WsInvalidJsonMessageDataError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'ws_invalid_json_message_data_error',
    status: 400,
    message: `The message data is invalid: ${args.reason}.`,
    details: { reason: args.reason },
  })
}

/** A request that decodes but breaks a rule of its type (`'listen' required`, `'data.accounts' required`…). */
export function WsMessageDataValidationError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'ws_message_data_validation_error',
    status: 400,
    message: `The message is invalid: ${args.reason}.`,
    details: { reason: args.reason },
  })
}

/** More listeners on one connection than allowed. */
export function WsTooMuchStreamError(args: { actual: number; maximum: number }): AntlerError {
  return new AntlerError({
    code: 'ws_too_much_stream_error',
    status: 423,
    message: `This connection already has ${args.actual} streams; at most ${args.maximum} are allowed.`,
    details: { actual_listener_count: args.actual, maximum_listener_count: args.maximum },
  })
}

/** A `req_id` that already names a live stream of the connection. */
export function WsStreamAlreadyExistError(args: { reqId: string }): AntlerError {
  return new AntlerError({
    code: 'ws_stream_already_exist_error',
    status: 409,
    message: `A stream with req_id ${JSON.stringify(args.reqId)} is already running on this connection.`,
    details: { request_id: args.reqId },
  })
}

/** `unlisten` of a `req_id` the connection has no stream for. */
export function WsStreamNotFoundError(args: { reqId: string }): AntlerError {
  return new AntlerError({
    code: 'ws_stream_not_found_error',
    status: 409,
    message: `No stream with req_id ${JSON.stringify(args.reqId)} runs on this connection.`,
    details: { request_id: args.reqId },
  })
}

/** A connection whose client reads slower than its streams produce: its send buffer passed the bound. */
export function WsConsumerTooSlowError(args: { bufferedBytes: number; limitBytes: number }): AntlerError {
  return new AntlerError({
    code: 'ws_consumer_too_slow_error',
    status: 429,
    message: `The client reads too slowly: ${args.bufferedBytes} bytes wait to be sent (limit ${args.limitBytes}); the connection is closed.`,
    details: { buffered_bytes: args.bufferedBytes, limit_bytes: args.limitBytes },
  })
}

/** `get_table_rows` with `fetch` at a start block above head. */
export function AppTableRowsCannotFetchInFutureError(args: { startBlock: number }): AntlerError {
  return new AntlerError({
    code: 'app_table_rows_cannot_fetch_in_future_error',
    status: 503,
    message: `Cannot fetch table rows at block ${args.startBlock}: it is above head.`,
    details: { start_block: args.startBlock },
  })
}

/** `get_head_info` with `fetch` before any block is stored. */
export function AppHeadInfoNotReadyError(): AntlerError {
  return new AntlerError({ code: 'app_head_info_not_ready_error', status: 503, message: 'No head block is known yet.' })
}

/** A WebSocket endpoint asked without the upgrade. */
export function UpgradeRequiredError(): AntlerError {
  return new AntlerError({
    code: 'upgrade_required_error',
    status: 426,
    message: 'This endpoint speaks WebSocket only; send an upgrade request.',
    details: { upgrade: 'websocket' },
  })
}

/** No route at this path. */
export function NotFoundError(args: { path: string }): AntlerError {
  return new AntlerError({
    code: 'not_found_error',
    status: 404,
    message: `Nothing is served at ${args.path}.`,
    details: { path: args.path },
  })
}

/** A route exists at this path, not for this method. */
export function MethodNotAllowedError(args: { method: string; allowed: string[] }): AntlerError {
  return new AntlerError({
    code: 'method_not_allowed_error',
    status: 405,
    message: `${args.method} is not allowed here; use ${args.allowed.join(' or ')}.`,
    details: { method: args.method, allowed: args.allowed },
  })
}

/** A malformed HTTP request (bad URL encoding, bad header) that never reached a route. */
export function BadRequestError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'bad_request_error',
    status: 400,
    message: 'The HTTP request is malformed.',
    details: { reason: args.reason },
  })
}

/**
 * The client closed the connection before the end of its body: no one reads the answer, but logs and metrics count it
 * as the client's.
 */
export function ClientClosedError(): AntlerError {
  return BadRequestError({ reason: 'the client closed the connection before the end of its body' })
}

/** Anything not raised on purpose: a fixed message, the cause goes to the log only. */
export function UnexpectedError(): AntlerError {
  return new AntlerError({ code: 'unexpected_error', status: 500, message: 'An unexpected error occurred.' })
}

/** The chain API behind the passthrough cannot be reached. */
export function ChainUnavailableError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'chain_unavailable_error',
    status: 502,
    message: 'The chain API is unavailable.',
    details: { reason: args.reason },
    retryable: true,
  })
}

/** The chain API did not answer within the passthrough's time limit. */
export function ChainTimeoutError(args: { timeoutMs: number }): AntlerError {
  return new AntlerError({
    code: 'chain_timeout_error',
    status: 504,
    message: `The chain API did not answer within ${args.timeoutMs} ms.`,
    details: { timeout_ms: args.timeoutMs },
    retryable: true,
  })
}

/** An `X-Eos-Push-Guarantee` value that is not in-block, handoff(s):1..3 or irreversible. */
export function InvalidPushGuaranteeError(args: { value: string }): AntlerError {
  return new AntlerError({
    code: 'push_invalid_guarantee_error',
    status: 400,
    message: 'X-Eos-Push-Guarantee must be in-block, handoff:1, handoffs:1..3 or irreversible.',
    details: { value: args.value },
  })
}

/** A binary WebSocket frame: the stream speaks JSON text frames only (423, as dfuse). */
export function WsBinaryMessageUnsupportedError(): AntlerError {
  return new AntlerError({
    code: 'ws_binary_message_unsupported_error',
    status: 423,
    message: 'Binary messages are not supported; send JSON text frames.',
  })
}

/** A WebSocket frame that is not a JSON object. */
export function WsInvalidJsonMessageError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'ws_invalid_json_message_error',
    status: 400,
    message: 'The message is not a valid JSON object.',
    details: { reason: args.reason },
  })
}

/** A WebSocket message whose `type` the stream does not know. */
export function WsUnknownMessageError(args: { type: string }): AntlerError {
  return new AntlerError({
    code: 'ws_unknown_message_error',
    status: 400,
    message: `Unknown message type ${JSON.stringify(args.type)}.`,
    details: { type: args.type },
  })
}

/** Request headers over Node's limit (answered on the raw socket, see client-errors.ts). */
export function RequestHeaderTooLargeError(): AntlerError {
  return new AntlerError({
    code: 'request_header_too_large_error',
    status: 431,
    message: 'The request headers are too large.',
  })
}

/** The server is shutting down: the request was not served (retry on another replica or after the restart). */
export function ServiceUnavailableError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'service_unavailable_error',
    status: 503,
    message: `The service is unavailable: ${args.reason}.`,
    details: { reason: args.reason },
    retryable: true,
  })
}
