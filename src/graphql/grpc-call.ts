import { status as Status, type ServerWritableStream } from '@grpc/grpc-js'
import { getOperationAST, type ExecutionResult } from 'graphql'
import type { TransportBacklog } from './context.ts'
import { newGraphqlTraceId } from './errors.ts'
import {
  createSharedSubscriptions,
  GraphqlRequestError,
  prepare,
  runGraphql,
  type SharedSubscription,
} from './execute.ts'
import {
  GrpcCallError,
  grpcCaller,
  grpcErrorOf,
  graphqlRequestOf,
  grpcResponseOf,
  grpcStatusOf,
  presentedGrpcToken,
  refusalDetails,
  responseBytes,
  type GrpcGraphqlRequest,
  type GrpcGraphqlResponse,
  type OnUnexpected,
} from './grpc-wire.ts'
import type { GraphqlRuntime } from './index.ts'

/** Token admission of one call (AuthService.admit's shape); it throws Antler's 401/403/429 errors. */
export type GrpcAdmit = (args: {
  token: string | undefined
  caller: { readonly ip: string; readonly origin?: string }
}) => Promise<unknown>

/** What every Execute call shares. */
export interface GraphqlGrpcDeps {
  readonly runtime: Pick<GraphqlRuntime, 'schema' | 'context'>
  /** Undefined with `--no-auth`: no token is asked for. */
  readonly admit: GrpcAdmit | undefined
  /** Bytes a call may hold unsent before its subscription ends as too slow. */
  readonly maxBufferedBytes: number
  readonly onUnexpected: OnUnexpected | undefined
}

type Call = ServerWritableStream<GrpcGraphqlRequest, GrpcGraphqlResponse>

/**
 * Subscriptions of a runtime over gRPC: each live event executed and encoded once per shape (execute.ts), whatever the
 * number of calls; one per runtime and error logger.
 */
const sharedByRuntime = new WeakMap<GraphqlGrpcDeps['runtime'], SharedSubscriptionsOf>()
type SharedSubscriptionsOf = ReturnType<typeof createSharedSubscriptions<GrpcGraphqlResponse>>

function sharedSubscriptions(deps: GraphqlGrpcDeps): SharedSubscriptionsOf {
  let found = sharedByRuntime.get(deps.runtime)
  if (!found)
    sharedByRuntime.set(
      deps.runtime,
      (found = createSharedSubscriptions<GrpcGraphqlResponse>(
        deps.runtime.schema,
        (result) => result,
        (result) => grpcResponseOf(result as ExecutionResult, deps.onUnexpected),
      )),
    )
  return found
}

const isStream = (outcome: object): outcome is AsyncGenerator<ExecutionResult> =>
  typeof (outcome as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function'

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
    if (deps.admit)
      await deps.admit({ token: presentedGrpcToken(call.metadata), caller: grpcCaller(call.getPeer(), call.metadata) })
    if (this.stopped) return
    const request = graphqlRequestOf(call.request)
    let outcome: ExecutionResult | AsyncGenerator<ExecutionResult> | SharedSubscription<GrpcGraphqlResponse>
    try {
      const document = prepare(deps.runtime.schema, request)
      outcome =
        getOperationAST(document, request.operationName)?.operation === 'subscription'
          ? await sharedSubscriptions(deps).subscribe(document, request, deps.runtime.context(this.backlog))
          : await runGraphql(deps.runtime.schema, request, deps.runtime.context(this.backlog))
    } catch (error) {
      if (error instanceof GraphqlRequestError)
        throw new GrpcCallError(Status.INVALID_ARGUMENT, refusalDetails(error.errors))
      throw error
    }
    if ('events' in outcome) return this.follow(outcome)
    if (!isStream(outcome)) {
      this.send(grpcResponseOf(outcome, deps.onUnexpected))
      return this.end()
    }
    this.stream = outcome
    if (this.stopped) this.release(outcome)
    while (!this.stopped) {
      let next: IteratorResult<ExecutionResult>
      try {
        next = await outcome.next()
      } catch (error) {
        this.send({ data: '', errors: [grpcErrorOf(error, deps.onUnexpected)] })
        break
      }
      if (next.done || this.stopped) break
      if (!this.send(grpcResponseOf(next.value, deps.onUnexpected))) await this.drained()
    }
    this.end()
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
        this.send({ data: '', errors: [grpcErrorOf(error, this.deps.onUnexpected)] })
        break
      }
      if (this.stopped) break
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
      const { code, details, metadata } = grpcStatusOf(error, this.deps.onUnexpected)
      this.call.emit('error', { code, details, message: details, metadata })
    } catch (failure) {
      this.deps.onUnexpected?.(failure, newGraphqlTraceId())
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
      this.deps.onUnexpected?.(error, newGraphqlTraceId()),
    )
  }
}
