import type { TestContext } from 'node:test'
import WebSocket from 'ws'
import { createClient, type Client, type ClientOptions } from 'graphql-ws'
import { onCleanup } from './cleanup.ts'

/** What `/graphql` answers (HTTP body, or one subscription message's payload). */
export interface GraphqlResponse<T = Record<string, unknown>> {
  readonly data?: T | null
  readonly errors?: readonly { message: string; extensions?: Record<string, unknown> }[]
}

/** The WebSocket URL of an API's `/graphql` (from its http:// base URL). */
export const graphqlSocketUrl = (api: string): string => `${api.replace(/^http/, 'ws')}/graphql`

/** `POST /graphql` with a bearer token; throws unless the answer is 200 with a JSON body (GraphQL errors included). */
export async function graphqlQuery<T = Record<string, unknown>>(
  api: string,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
  timeoutMs = 30_000,
): Promise<GraphqlResponse<T>> {
  const response = await fetch(`${api}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(timeoutMs),
  })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`POST /graphql answered ${response.status}: ${body}`)
  return JSON.parse(body) as GraphqlResponse<T>
}

/**
 * A `graphql-ws` client (modern `graphql-transport-ws` subprotocol) for the API with the token in `connection_init`,
 * disposed after the test. It does not retry by default: a dropped connection ends its subscriptions with an error.
 */
export function modernGraphqlClient(
  t: TestContext,
  api: string,
  token: string,
  options: Partial<ClientOptions> = {},
): Client {
  const client = createClient({
    url: graphqlSocketUrl(api),
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: token },
    retryAttempts: 0,
    lazy: true,
    ...options,
  })
  onCleanup(t, () => client.dispose())
  return client
}

/** What an operation of the legacy client reports. */
export interface LegacyHandlers {
  /** A `data` frame's payload. */
  next(payload: GraphqlResponse): void
  /** An `error` frame's payload (one error object in dfuse's variant). */
  error(payload: unknown): void
  complete(): void
}

/**
 * A client of the legacy Apollo `subscriptions-transport-ws` protocol (subprotocol `graphql-ws`), which
 * @dfuse/client speaks: `connection_init` → `connection_ack`, then `start`/`stop` of operations by id, answered by
 * `data`, `error` and `complete` frames (`ka` keep-alives are ignored). Frames are raw, so a test can drop the
 * connection abruptly (`terminate`) or politely (`close`).
 */
export class LegacyGraphqlClient {
  private readonly operations = new Map<string, LegacyHandlers>()
  /** Called once the socket closes, with whether this client closed it. */
  onClose: ((byClient: boolean) => void) | undefined
  private closing = false

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.receive(data.toString()))
    socket.on('close', () => this.onClose?.(this.closing))
  }

  /**
   * Opens `/graphql` and waits for `connection_ack` (rejects on `connection_error`, a close or `timeoutMs`). With `t`,
   * the socket is terminated after the test.
   */
  static async connect(api: string, token: string, t?: TestContext, timeoutMs = 10_000): Promise<LegacyGraphqlClient> {
    const socket = new WebSocket(graphqlSocketUrl(api), 'graphql-ws')
    if (t) onCleanup(t, () => socket.terminate())
    await new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => {
        clearTimeout(timer)
        socket.terminate()
        reject(error)
      }
      const timer = setTimeout(() => fail(new Error(`no connection_ack within ${timeoutMs} ms`)), timeoutMs)
      socket.once('error', fail)
      socket.once('close', () => fail(new Error('the socket closed before connection_ack')))
      socket.once('open', () =>
        socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: token } })),
      )
      const onMessage = (data: WebSocket.RawData) => {
        const frame = JSON.parse(data.toString()) as { type: string; payload?: unknown }
        if (frame.type === 'ka') return
        socket.off('message', onMessage)
        if (frame.type !== 'connection_ack') return fail(new Error(`answered ${data.toString()} to connection_init`))
        clearTimeout(timer)
        socket.removeAllListeners('close').removeAllListeners('error')
        socket.on('error', () => undefined)
        resolve()
      }
      socket.on('message', onMessage)
    })
    return new LegacyGraphqlClient(socket)
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN
  }

  /** Starts an operation (a query or a subscription) under `id`. */
  start(id: string, query: string, variables: Record<string, unknown>, handlers: LegacyHandlers): void {
    this.operations.set(id, handlers)
    this.socket.send(JSON.stringify({ type: 'start', id, payload: { query, variables } }))
  }

  /** Stops an operation: no more frames of it are reported. */
  stop(id: string): void {
    this.operations.delete(id)
    if (this.open) this.socket.send(JSON.stringify({ type: 'stop', id }))
  }

  /** Drops the connection at once (no close handshake), as a crashed client or a lost network would. */
  terminate(): void {
    this.closing = true
    this.operations.clear()
    this.socket.terminate()
  }

  /** Closes politely: `connection_terminate`, then a normal close. */
  close(): void {
    this.closing = true
    this.operations.clear()
    if (this.open) this.socket.send(JSON.stringify({ type: 'connection_terminate' }))
    this.socket.close(1000)
  }

  private receive(text: string): void {
    const frame = JSON.parse(text) as { type: string; id?: string; payload?: unknown }
    const handlers = frame.id === undefined ? undefined : this.operations.get(frame.id)
    if (!handlers) return
    if (frame.type === 'data') handlers.next(frame.payload as GraphqlResponse)
    else if (frame.type === 'error') {
      this.operations.delete(frame.id!)
      handlers.error(frame.payload)
    } else if (frame.type === 'complete') {
      this.operations.delete(frame.id!)
      handlers.complete()
    }
  }
}
