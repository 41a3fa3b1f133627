import { defineError, type NoDetails } from '../error-definition.ts'

/** The codes sent as error messages on an open `/v1/stream` (their status is internal: none goes on a socket). */
export const STREAM_ERRORS = {
  ws_binary_message_unsupported_error: defineError<NoDetails>({
    status: 423,
    message: () => 'Binary messages are not supported; send JSON text frames.',
  }),
  ws_invalid_json_message_error: defineError<{ reason: string }>({
    status: 400,
    message: () => 'The message is not a valid JSON object.',
  }),
  ws_unknown_message_error: defineError<{ type: string }>({
    status: 400,
    message: (d) => `Unknown message type ${JSON.stringify(d.type)}.`,
  }),
  ws_invalid_json_message_data_error: defineError<{ reason: string }>({
    status: 400,
    message: (d) => `The message data is invalid: ${d.reason}.`,
  }),
  ws_message_data_validation_error: defineError<{ reason: string }>({
    status: 400,
    message: (d) => `The message is invalid: ${d.reason}.`,
  }),
  ws_stream_already_exist_error: defineError<{ request_id: string }>({
    status: 409,
    message: (d) => `A stream with req_id ${JSON.stringify(d.request_id)} is already running on this connection.`,
  }),
  ws_stream_not_found_error: defineError<{ request_id: string }>({
    status: 409,
    message: (d) => `No stream with req_id ${JSON.stringify(d.request_id)} runs on this connection.`,
  }),
  ws_too_much_stream_error: defineError<{ actual_listener_count: number; maximum_listener_count: number }>({
    status: 423,
    message: (d) =>
      `This connection already has ${d.actual_listener_count} streams; ` +
      `at most ${d.maximum_listener_count} are allowed.`,
  }),
  ws_consumer_too_slow_error: defineError<{ buffered_bytes: number; limit_bytes: number }>({
    status: 429,
    message: (d) =>
      `The client reads too slowly: ${d.buffered_bytes} bytes wait to be sent (limit ${d.limit_bytes}); ` +
      'the connection is closed.',
  }),
  stream_consumer_too_slow_error: defineError<{
    queued_steps: number
    queued_bytes: number
    max_queued_steps: number
    max_queued_bytes: number
    delivered_seq: number
  }>({
    status: 429,
    message: (d) =>
      `The stream consumer is too slow: ${d.queued_steps} steps (${d.queued_bytes} bytes) were waiting to be sent, ` +
      `over the server's bound of ${d.max_queued_steps} steps or ${d.max_queued_bytes} bytes; ` +
      'reconnect and resume after the last step received.',
  }),
  app_table_rows_cannot_fetch_in_future_error: defineError<{ start_block: number }>({
    status: 503,
    message: (d) => `Cannot fetch table rows at block ${d.start_block}: it is above head.`,
  }),
  app_head_info_not_ready_error: defineError<NoDetails>({ status: 503, message: () => 'No head block is known yet.' }),
  data_trx_appearance_timeout_error: defineError<{ trx_id: string; last_seen_block_id: string }>({
    status: 400,
    message: (d) => `Transaction ${d.trx_id} did not appear or change in time; the stream stopped.`,
  }),
} as const
