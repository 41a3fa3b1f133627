import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { isStandardError } from './platform.ts'

/** An HTTP answer: status, headers, the raw text and its JSON (undefined when it is not JSON). */
export interface Answer {
  status: number
  headers: Headers
  text: string
  body: unknown
}

export type ErrorBody = { code: string; trace_id: string; message: string; details?: Record<string, unknown> }

/** The JSON of a text, or undefined. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A fetch that never hangs a test (`timeoutMs`, default 10 s) and keeps the raw text. */
export async function send(
  url: string,
  init: Omit<RequestInit, 'body'> & { body?: string | Buffer; timeoutMs?: number } = {},
): Promise<Answer> {
  const { timeoutMs = 10_000, ...rest } = init
  const body = typeof rest.body === 'string' || rest.body === undefined ? rest.body : new Uint8Array(rest.body)
  const response = await fetch(url, { ...rest, body, signal: AbortSignal.timeout(timeoutMs) })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, body: parseJson(text) }
}

/** Stack frames, source paths or dependency names in an answer: what an error must never show. */
const LEAK =
  /\bat (?:async )?[\w$.<>[\] ]*\(?(?:file:|node:|\/)[^\s)]*:\d+|node_modules|node:internal|file:\/\/|\.[cm]?[jt]s:\d+|"stack"/
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

export function assertNoLeak(text: string): void {
  assert.doesNotMatch(text, LEAK, `no stack trace or path in ${text.slice(0, 400)}`)
  assert.ok(!text.includes(REPO_ROOT), `no source path in ${text.slice(0, 400)}`)
}

/**
 * The standard error object with this status and code (and these details), its trace id in `X-Trace-Id`; returns it.
 */
export function assertError(
  answer: { status: number; text: string; body: unknown; traceHeader: string | null },
  status: number,
  code: string,
  details: Record<string, unknown> = {},
): ErrorBody {
  assert.equal(answer.status, status, `status of ${answer.text.slice(0, 300)}`)
  assert.ok(isStandardError(answer.body), `a standard error object: ${answer.text.slice(0, 300)}`)
  const body = answer.body as ErrorBody
  assert.equal(body.code, code, answer.text.slice(0, 300))
  assert.match(body.trace_id, /^[0-9a-f]{32}$/)
  assert.equal(answer.traceHeader, body.trace_id, 'X-Trace-Id is the trace_id')
  for (const [key, value] of Object.entries(details))
    assert.deepEqual(body.details?.[key], value, `details.${key} of ${answer.text.slice(0, 300)}`)
  assertNoLeak(answer.text)
  return body
}

/** `assertError` on a fetch answer. */
export const expectError = (
  answer: Answer,
  status: number,
  code: string,
  details: Record<string, unknown> = {},
): ErrorBody => assertError({ ...answer, traceHeader: answer.headers.get('x-trace-id') }, status, code, details)
