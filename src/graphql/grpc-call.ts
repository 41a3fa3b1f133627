import { status as Status, type ServerWritableStream } from '@grpc/grpc-js'
import type { ExecutionResult } from 'graphql'
import { newTraceId } from '../antelope/index.ts'
import { refusedKeyId } from '../auth/index.ts'
import type { TransportBacklog } from './context.ts'
import type { GraphqlExecution, PayloadEncoding, SharedSubscription } from './execute.ts'
import { GraphqlRequestError } from './operations.ts'
import {
  GrpcCallError,
  grpcCaller,
  grpcErrorOf,
  grpcErrorOfWire,
  grpcRequestParams,
  grpcResponseOf,
  grpcStatusOf,
  presentedGrpcToken,
  refusalDetails,
  responseBytes,
  type GrpcGraphqlRequest,
  type GrpcGraphqlResponse,
} from './grpc-wire.ts'
import { answerDocuments, countRequest, usageOutcome } from './usage.ts'

/** What every Execute call shares. */
export interface GraphqlGrpcDeps {
  readonly execution: GraphqlExecution
  /** Bytes a call may hold unsent before its subscription ends as too slow. */
  readonly maxBufferedBytes: number
  /** How a subscription's results are written: one Response per result (shared per shape by the execution layer). */
  readonly encoding: PayloadEncoding<GrpcGraphqlResponse>
}

type Call = ServerWritableStream<GrpcGraphqlRequest, GrpcGraphqlResponse>

/** The encoding of gRPC Responses, errors in wire form (an unexpected one logged once, by the execution layer). */
export const grpcEncoding = (execution: GraphqlExecution): PayloadEncoding<GrpcGraphqlResponse> => ({
  name: 'grpc',
  encode: (result) => grpcResponseOf(result, execution.onUnexpected),
})

/**
 * One `Execute` call, from admission to its status:
 * - the token of the `authorization` metadata is admitted first (each call counts against the key's limits); a refusal
 *   ends the call with the gRPC status of its HTTP one (401 `UNAUTHENTICATED`, 403 `PERMISSION_DENIED`, 429
 *   `RESOURCE_EXHAUSTED`);
 * - a request refused before it runs (no query, too long a query, a syntax or validation error, an unknown operation
 *   name, `variables` that is not JSON text of an object) ends with `INVALID_ARGUMENT`;
 * - a query answers one Response (errors of its execution inside, as over HTTP), then `OK`;
 * - a subscription answers one Response per result; an error that ends its stream comes as one last Response with
 *   the error in `errors` (`extensions.terminal` true), then `OK`, as dfuse sent it;
 * - the client's cancellation releases the subscription at once; a Response is pulled only once the previous ones
 *   have drained, and the subscription sees the call's unsent bytes (it ends as too slow above the bound);
 * - an error no one expected ends the call with `INTERNAL` and a fixed message (logged with its trace id).
 */
export class GraphqlGrpcCall {
  private stream: AsyncIterator<unknown> | undefined
  private stopped = false
  /** The key the call counts against, once admitted or refused. */
  private keyId: string | undefined
  private counted = false
  private unsentBytes = 0
  private wake: (() => void) | undefined
  private readonly backlog: TransportBacklog

  constructor(
    private readonly call: Call,
    private readonly deps: GraphqlGrpcDeps,
  ) {
    this.backlog = { bufferedBytes: () => this.unsentBytes, maxBufferedBytes: deps.maxBufferedBytes }
    call.on('cancelled', () => this.stop())
    call.on('close', () => this.stop())
  }

  /** Serves the call to its end; never rejects. */
  async serve(): Promise<void> {
    try {
      await this.run()
    } catch (error) {
      this.fail(error)
    } finally {
      this.stop()
    }
  }

  /** Ends the call from the server's side (shutdown) with `error`'s status, releasing its subscription. */
  shutdown(error: GrpcCallError): void {
    this.fail(error)
    this.stop()
  }

  private async run(): Promise<void> {
    const { call, deps } = this
    const { execution } = deps
    let admitted
    try {
      admitted = await execution.admit(presentedGrpcToken(call.metadata), grpcCaller(call.getPeer(), call.metadata))
    } catch (error) {
      this.keyId = refusedKeyId(error)
      throw error
    }
    this.keyId = admitted.keyId
    if (this.stopped) return
    const kinds = ['query', 'subscription'] as const
    let operation
    try {
      operation = execution.prepare(grpcRequestParams(call.request), kinds)
    } catch (error) {
      if (error instanceof GraphqlRequestError)
        throw new GrpcCallError(Status.INVALID_ARGUMENT, refusalDetails(error.errors))
      throw error
    }
    const context = execution.context({ backlog: this.backlog })
    if (operation.operation.operation === 'subscription') {
      const started = await execution.subscribe(operation, context, deps.encoding)
      if ('events' in started) {
        this.count('ok', 0)
        return this.follow(started)
      }
      return this.answer(started)
    }
    return this.answer(await execution.execute(operation, context))
  }

  /** One Response, then `OK`: counted by its errors. */
  private answer(result: ExecutionResult): void {
    const wire = (result.errors ?? []).map((error) => this.deps.execution.wireError(error))
    this.count(usageOutcome(wire), answerDocuments(result))
    this.send({ data: result.data === undefined ? '' : JSON.stringify(result.data), errors: wire.map(grpcErrorOfWire) })
    this.end()
  }

  /** Counts the call once, for the key it was admitted (or refused) with. */
  private count(outcome: Parameters<typeof countRequest>[2], documents: number): void {
    if (this.counted) return
    this.counted = true
    countRequest(this.deps.execution.usage, this.keyId, outcome, documents)
  }

  /** A subscription's events, each as the shared Response of its shape, until it ends or the call does. */
  private async follow(subscription: SharedSubscription<GrpcGraphqlResponse>): Promise<void> {
    const events = subscription.events
    this.stream = events
    if (this.stopped) this.release(events)
    while (!this.stopped) {
      let response: GrpcGraphqlResponse
      try {
        const next = await events.next()
        if (next.done || this.stopped) break
        response = await subscription.payload(next.value)
      } catch (error) {
        this.send({ data: '', errors: [grpcErrorOf(error, this.deps.execution.onUnexpected)] })
        break
      }
      if (this.stopped) break
      if (this.keyId !== undefined) this.deps.execution.usage.documents(this.keyId, 1)
      if (!this.send(response)) await this.drained()
    }
    this.end()
  }

  /** Whether the call can still take a message or a status. */
  private open(): boolean {
    return !this.call.cancelled && !this.call.destroyed && !this.call.writableEnded
  }

  /** Writes a Response; false when the client is behind (wait for 'drain' before the next). */
  private send(response: GrpcGraphqlResponse): boolean {
    if (!this.open()) return true
    const bytes = responseBytes(response)
    this.unsentBytes += bytes
    return this.call.write(response, () => {
      this.unsentBytes -= bytes
    })
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.call.off('drain', done)
        this.wake = undefined
        resolve()
      }
      this.wake = done
      this.call.on('drain', done)
    })
  }

  private end(): void {
    if (this.open()) this.call.end()
  }

  /** Ends the call with the status of `error` (unless it has ended). */
  private fail(error: unknown): void {
    try {
      if (!this.open()) return
      const { code, details, metadata, outcome } = grpcStatusOf(error, this.deps.execution.onUnexpected)
      this.count(outcome, 0)
      this.call.emit('error', { code, details, message: details, metadata })
    } catch (failure) {
      this.deps.execution.onUnexpected(failure, newTraceId())
      this.call.destroy()
    }
  }

  /** Releases the subscription (once) and wakes a wait for 'drain'. */
  private stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.wake?.()
    if (this.stream) this.release(this.stream)
  }

  private release(stream: AsyncIterator<unknown>): void {
    Promise.resolve(stream.return?.(undefined)).catch((error: unknown) =>
      this.deps.execution.onUnexpected(error, newTraceId()),
    )
  }
}
