import {
  WsBinaryMessageUnsupportedError,
  WsInvalidJsonMessageDataError,
  WsInvalidJsonMessageError,
  WsUnknownMessageError,
} from '../errors.ts'

/** The request types of dfuse's `/v1/stream` (docs/API.md, "Wire facts"), aliases resolved. */
export type StreamRequestType =
  'get_action_traces' | 'get_table_rows' | 'get_transaction_lifecycle' | 'get_head_info' | 'unlisten'

const TYPES: Readonly<Record<string, StreamRequestType>> = {
  get_action_traces: 'get_action_traces',
  get_actions: 'get_action_traces',
  get_table_rows: 'get_table_rows',
  get_transaction_lifecycle: 'get_transaction_lifecycle',
  get_transaction: 'get_transaction_lifecycle',
  get_head_info: 'get_head_info',
  unlisten: 'unlisten',
}

/** One client request, its envelope checked; `data` is checked by the request's handler. */
export interface StreamRequest {
  readonly type: StreamRequestType
  /** '' when absent: dfuse keys listeners by it, the empty one included. */
  readonly reqId: string
  readonly fetch: boolean
  readonly listen: boolean
  /** Absent, 0 (head), negative (relative to head) or an absolute block. */
  readonly startBlock: number
  readonly irreversibleOnly: boolean
  /** Emit `progress` every this many blocks; 0 = never. */
  readonly withProgress: number
  readonly data: Readonly<Record<string, unknown>>
}

/** What a frame is before its type is served: a `pong` (ignored) or a request. */
export type ParsedFrame = { readonly pong: true } | { readonly pong: false; readonly request: StreamRequest }

function field<T>(
  message: Record<string, unknown>,
  name: string,
  kind: 'boolean' | 'string' | 'integer' | 'object',
  fallback: T,
): T {
  const value = message[name]
  if (value === undefined || value === null) return fallback
  const ok =
    kind === 'integer'
      ? Number.isSafeInteger(value)
      : kind === 'object'
        ? typeof value === 'object' && !Array.isArray(value)
        : typeof value === kind
  if (!ok)
    throw WsInvalidJsonMessageDataError({
      reason: `'${name}' must be ${kind === 'integer' ? 'an integer' : `a ${kind}`}`,
    })
  return value as T
}

/** The `req_id` of a frame, when it has a string one (for error replies to frames that fail later). */
export function frameReqId(message: unknown): string | undefined {
  const reqId = (message as { req_id?: unknown } | null)?.req_id
  return typeof reqId === 'string' ? reqId : undefined
}

/**
 * Parses one frame in dfuse's order (docs/API.md, "Wire facts"): a binary frame or bad JSON is refused, `pong` is
 * ignored, an unknown type is refused, then the envelope fields are type-checked.
 */
export function parseFrame(data: Buffer, isBinary: boolean): ParsedFrame {
  if (isBinary) throw WsBinaryMessageUnsupportedError()
  let message: unknown
  try {
    message = JSON.parse(data.toString('utf8'))
  } catch (error) {
    throw WsInvalidJsonMessageError({ reason: (error as Error).message })
  }
  if (
    typeof message !== 'object' ||
    message === null ||
    Array.isArray(message) ||
    typeof (message as { type?: unknown }).type !== 'string'
  )
    throw WsInvalidJsonMessageError({ reason: 'expected an object with a string "type"' })
  const m = message as Record<string, unknown>
  if (m.type === 'pong') return { pong: true }
  const type = TYPES[m.type as string]
  if (!type) throw WsUnknownMessageError({ type: m.type as string })
  const startBlock = field(m, 'start_block', 'integer', 0)
  const withProgress = field(m, 'with_progress', 'integer', 0)
  if (withProgress < 0) throw WsInvalidJsonMessageDataError({ reason: "'with_progress' must not be negative" })
  return {
    pong: false,
    request: {
      type,
      reqId: field(m, 'req_id', 'string', ''),
      fetch: field(m, 'fetch', 'boolean', false),
      listen: field(m, 'listen', 'boolean', false),
      startBlock,
      irreversibleOnly: field(m, 'irreversible_only', 'boolean', false),
      withProgress,
      data: field(m, 'data', 'object', {}),
    },
  }
}

/** A `data` field of a request: a string (trimmed), a boolean, or absent. */
export function dataString(data: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = data[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw WsInvalidJsonMessageDataError({ reason: `'data.${name}' must be a string` })
  return value.trim()
}

export function dataBoolean(data: Readonly<Record<string, unknown>>, name: string): boolean {
  const value = data[name]
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') throw WsInvalidJsonMessageDataError({ reason: `'data.${name}' must be a boolean` })
  return value
}
