import { GraphQLError } from 'graphql'
import { graphqlWireError } from '../../graphql/index.ts'

/** A GraphQL-over-WebSocket frame, as far as the socket guard reads it. */
export interface Frame {
  type?: unknown
  id?: unknown
  payload?: unknown
}

/** What a frame's text is: a JSON object, other JSON (null, a number, an array), or not JSON. */
export function readFrame(data: Buffer | string): { frame: Frame } | 'not-object' | 'not-json' {
  let value: unknown
  try {
    value = JSON.parse(data.toString())
  } catch {
    return 'not-json'
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? { frame: value as Frame } : 'not-object'
}

/** An error as the protocol's payload: one object in the legacy protocol (as dfuse sent it), an array otherwise. */
export const errorPayload = (legacy: boolean, errors: readonly unknown[]): unknown => (legacy ? errors[0] : errors)

/** An error object mercurius wrote itself (no trace id): put in the documented shape, keeping message and place. */
function documented(error: unknown): unknown {
  if (!error || typeof error !== 'object') return graphqlWireError(new GraphQLError(String(error)))
  const e = error as { message?: unknown; locations?: unknown; path?: unknown; extensions?: { trace_id?: unknown } }
  if (typeof e.extensions?.trace_id === 'string') return error
  const wire = graphqlWireError(new GraphQLError(typeof e.message === 'string' ? e.message : 'error'))
  return {
    ...wire,
    ...(Array.isArray(e.locations) ? { locations: e.locations } : {}),
    ...(Array.isArray(e.path) ? { path: e.path } : {}),
  }
}

/**
 * An outgoing frame with every error in the documented shape (`{message, extensions: {code, terminal, trace_id, …}}`)
 * and, in the legacy protocol, one error object per `error` frame. Frames carrying no error are left untouched
 * (checked on the text first: results are not parsed again).
 */
export function documentedFrame(data: string, legacy: boolean): string {
  if (!data.includes('"error')) return data
  const read = readFrame(data)
  if (typeof read === 'string') return data
  const { frame } = read
  if (frame.type === 'error') {
    const errors = Array.isArray(frame.payload) ? frame.payload : [frame.payload]
    return JSON.stringify({ ...frame, payload: errorPayload(legacy, errors.map(documented)) })
  }
  const payload = frame.payload as { errors?: unknown } | null | undefined
  if ((frame.type === 'data' || frame.type === 'next') && payload && Array.isArray(payload.errors))
    return JSON.stringify({ ...frame, payload: { ...payload, errors: payload.errors.map(documented) } })
  return data
}
