import { AntlerError } from '../antelope/index.ts'

/** Bad parameters or body: `details.errors` maps each parameter to its problems (dfuse's shape). */
export function RequestValidationError(args: { errors: Record<string, string[]> }): AntlerError {
  return new AntlerError('request_validation_error', { errors: args.errors })
}

/** A body that is not JSON where JSON is expected. */
export function InvalidJsonError(args: { reason: string }): AntlerError {
  return new AntlerError('invalid_json_error', { reason: args.reason })
}

/** A route that needs a body got none. */
export function MissingBodyError(): AntlerError {
  return new AntlerError('missing_body_error')
}

/** A body over the route's limit. */
export function RequestTooLargeError(args: { limitBytes: number }): AntlerError {
  return new AntlerError('request_too_large_error', { limit_bytes: args.limitBytes })
}

/** A body in a media type the route does not read. */
export function UnsupportedMediaTypeError(args: { contentType: string }): AntlerError {
  return new AntlerError('unsupported_media_type_error', { content_type: args.contentType })
}

/** A body in a Content-Encoding the API does not decode (gzip, deflate and br are decoded). */
export function UnsupportedContentEncodingError(args: { contentEncoding: string }): AntlerError {
  return new AntlerError('unsupported_content_encoding_error', { content_encoding: args.contentEncoding })
}

/** A request's fields have the wrong JSON types (dfuse's typed decode step). */
export function WsInvalidJsonMessageDataError(args: { reason: string }): AntlerError {
  return new AntlerError('ws_invalid_json_message_data_error', { reason: args.reason })
}

/** A request that decodes but breaks a rule of its type (`'listen' required`, `'data.accounts' required`…). */
export function WsMessageDataValidationError(args: { reason: string }): AntlerError {
  return new AntlerError('ws_message_data_validation_error', { reason: args.reason })
}

/** More listeners on one connection than allowed. */
export function WsTooMuchStreamError(args: { actual: number; maximum: number }): AntlerError {
  return new AntlerError('ws_too_much_stream_error', {
    actual_listener_count: args.actual,
    maximum_listener_count: args.maximum,
  })
}

/** A `req_id` that already names a live stream of the connection. */
export function WsStreamAlreadyExistError(args: { reqId: string }): AntlerError {
  return new AntlerError('ws_stream_already_exist_error', { request_id: args.reqId })
}

/** `unlisten` of a `req_id` the connection has no stream for. */
export function WsStreamNotFoundError(args: { reqId: string }): AntlerError {
  return new AntlerError('ws_stream_not_found_error', { request_id: args.reqId })
}

/** A connection whose client reads slower than its streams produce: its send buffer passed the bound. */
export function WsConsumerTooSlowError(args: { bufferedBytes: number; limitBytes: number }): AntlerError {
  return new AntlerError('ws_consumer_too_slow_error', {
    buffered_bytes: args.bufferedBytes,
    limit_bytes: args.limitBytes,
  })
}

/** `get_table_rows` with `fetch` at a start block above head. */
export function AppTableRowsCannotFetchInFutureError(args: { startBlock: number }): AntlerError {
  return new AntlerError('app_table_rows_cannot_fetch_in_future_error', { start_block: args.startBlock })
}

/** `get_head_info` with `fetch` before any block is stored. */
export function AppHeadInfoNotReadyError(): AntlerError {
  return new AntlerError('app_head_info_not_ready_error')
}

/**
 * A WebSocket endpoint asked without the upgrade: dfuse's `ws_upgrade_failed_error` (400), with the reason its
 * WebSocket library gave.
 */
export function UpgradeRequiredError(): AntlerError {
  return WsUpgradeFailedError({
    reason: "the client is not using the websocket protocol: 'upgrade' token not found in 'Connection' header",
  })
}

/** A WebSocket handshake refused (bad key, version, Upgrade or subprotocol list), as dfuse (400). */
export function WsUpgradeFailedError(args: { reason: string }): AntlerError {
  return new AntlerError('ws_upgrade_failed_error', { reason: args.reason })
}

/** No route at this path. */
export function NotFoundError(args: { path: string }): AntlerError {
  return new AntlerError('not_found_error', { path: args.path })
}

/** A route exists at this path, not for this method. */
export function MethodNotAllowedError(args: { method: string; allowed: string[] }): AntlerError {
  return new AntlerError('method_not_allowed_error', { method: args.method, allowed: args.allowed })
}

/** A malformed HTTP request (bad URL encoding, bad header) that never reached a route. */
export function BadRequestError(args: { reason: string }): AntlerError {
  return new AntlerError('bad_request_error', { reason: args.reason })
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
  return new AntlerError('unexpected_error')
}

/** The chain API behind the passthrough cannot be reached. */
export function ChainUnavailableError(args: { reason: string }): AntlerError {
  return new AntlerError('chain_unavailable_error', { reason: args.reason })
}

/** The chain API did not answer within the passthrough's time limit. */
export function ChainTimeoutError(args: { timeoutMs: number }): AntlerError {
  return new AntlerError('chain_timeout_error', { timeout_ms: args.timeoutMs })
}

/** An `X-Eos-Push-Guarantee` value that is not in-block, handoff(s):1..3 or irreversible. */
export function InvalidPushGuaranteeError(args: { value: string }): AntlerError {
  return new AntlerError('push_invalid_guarantee_error', { value: args.value })
}

/** A binary WebSocket frame: the stream speaks JSON text frames only (423, as dfuse). */
export function WsBinaryMessageUnsupportedError(): AntlerError {
  return new AntlerError('ws_binary_message_unsupported_error')
}

/** A WebSocket frame that is not a JSON object. */
export function WsInvalidJsonMessageError(args: { reason: string }): AntlerError {
  return new AntlerError('ws_invalid_json_message_error', { reason: args.reason })
}

/** A WebSocket message whose `type` the stream does not know. */
export function WsUnknownMessageError(args: { type: string }): AntlerError {
  return new AntlerError('ws_unknown_message_error', { type: args.type })
}

/** Request headers over Node's limit (answered on the raw socket, see client-errors.ts). */
export function RequestHeaderTooLargeError(): AntlerError {
  return new AntlerError('request_header_too_large_error')
}

/** The server is shutting down: the request was not served (retry on another replica or after the restart). */
export function ServiceUnavailableError(args: { reason: string }): AntlerError {
  return new AntlerError('service_unavailable_error', { reason: args.reason })
}
