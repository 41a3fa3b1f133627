import { performance } from 'node:perf_hooks'
import type { ExecutionResult } from 'graphql'
import { AntlerError, type FailureLogger } from '../antelope/index.ts'
import type { GraphqlRuntime } from '../graphql/index.ts'
import type { KeyStore, StepReader, StorePosition, WebhookStore } from '../store/index.ts'
import type { AllowList } from './address-policy.ts'
import { WebhookDispatcher } from './dispatcher.ts'
import { createHttpSender } from './http-sender.ts'
import { createEventSteps } from './delivery-messages.ts'
import { DELIVERY_DOCUMENT } from './messages.ts'
import { OwnerRate } from './owner-rate.ts'
import type { RetrySchedule } from './retry-schedule.ts'
import type { DeliveryOutcome, PostMessage } from './send-signed.ts'
import { createWebhookService, type WebhookLimits, type WebhookService } from './service.ts'
import { createWebhookSigner } from './signing.ts'
import { checkTargetUrl, resolveTarget, systemResolver, type Resolver } from './target-check.ts'

export type { Resolver } from './target-check.ts'
import type { WorkerDeps } from './worker.ts'

export { parseAllowCidrs, describeAllowList, type AllowList } from './address-policy.ts'
export { DEFAULT_WEBHOOK_RETRIES, parseRetrySchedule, parseDuration, type RetrySchedule } from './retry-schedule.ts'
export { DEFAULT_WEBHOOK_LIMITS, SECRET_GRACE_MS, type WebhookService, type WebhookLimits } from './service.ts'
export { signWebhook, newWebhookSecret, type WebhookSigner } from './signing.ts'
export { MAX_BODY_BYTES } from './messages.ts'
export type { DeliveryOutcome } from './send-signed.ts'

/** How long one try of a delivery may take: connect, request, response. */
export const DELIVERY_TIMEOUT_MS = 15_000

export interface WebhooksOptions {
  readonly store: WebhookStore &
    Pick<StepReader, 'stepsOfBlock'> &
    Pick<KeyStore, 'revokedApiKeyIds'> & { position(): Promise<StorePosition | undefined> }
  readonly graphql: GraphqlRuntime
  /** Addresses deliveries may reach although blocked by default (`--webhook-allow-cidr`). */
  readonly allow: AllowList
  readonly resolver?: Resolver
  readonly retries: RetrySchedule
  /** A subscription failing continuously this long is disabled (5 days). */
  readonly disableAfterMs: number
  readonly limits: WebhookLimits & { readonly deliveriesPerSecondPerKey: number }
  /** The live hub's last step: what an event's steps are kept for (absent: read for each subscription). */
  readonly stepStamp?: () => number
  /** Where the dispatcher's and the workers' unexpected failures are logged (repeats as counts). */
  readonly log?: FailureLogger
  readonly onDelivered?: WorkerDeps['onDelivered']
  readonly now?: () => number
}

export interface Webhooks {
  readonly service: WebhookService
  close(): Promise<void>
}

/**
 * Connections kept to one receiver address: many subscriptions of one customer often share an endpoint, and each
 * connection carries one request at a time.
 */
const CONNECTIONS_PER_ORIGIN = 16

/** How long a target's name may take to resolve (the system resolver has no bound of its own). */
const DNS_TIMEOUT_MS = 5_000

/** `resolver`, failing (a `dns` refusal) when it has not answered within `ms`. */
const resolveWithin =
  (resolver: Resolver, ms: number): Resolver =>
  async (hostname) => {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        resolver(hostname),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
        }),
      ])
    } finally {
      clearTimeout(timer)
    }
  }

/** A refused target as a failed attempt (delivery time), or undefined for any other error. */
function refusalOutcome(error: unknown, startedMs: number): DeliveryOutcome | undefined {
  if (!(error instanceof AntlerError) || error.code !== 'webhook_target_refused_error') return undefined
  const reason = (error.details as { reason?: string }).reason
  return {
    ok: false,
    status: null,
    durationMs: Math.round(performance.now() - startedMs),
    error: reason === 'blocked_ip' ? 'blocked_ip' : 'dns',
    responseBody: null,
  }
}

/** The webhooks surface: the service the routes call and, where this process delivers, the dispatcher. */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  const now = options.now ?? Date.now
  const resolver = resolveWithin(options.resolver ?? systemResolver, DNS_TIMEOUT_MS)
  // The one check of a target, at registration and before every delivery: the URL, then every address of its host.
  const checkedTarget = async (url: string) => {
    const parsed = checkTargetUrl(url)
    return { url: parsed, target: await resolveTarget(parsed, options.allow, resolver) }
  }
  const sender = createHttpSender({ maxConnectionsPerOrigin: CONNECTIONS_PER_ORIGIN })
  const sign = createWebhookSigner()
  const post: PostMessage = async (url, headers, body, signal) => {
    const started = performance.now()
    let checked: Awaited<ReturnType<typeof checkedTarget>>
    try {
      checked = await checkedTarget(url)
    } catch (error) {
      const outcome = refusalOutcome(error, started)
      if (outcome) return outcome
      throw error
    }
    return sender.send({ ...checked, headers, body, timeoutMs: DELIVERY_TIMEOUT_MS, signal })
  }
  // The delivery subscription goes through the runtime's execution layer as any transport's: prepared once here.
  const messages = {
    store: options.store,
    graphql: options.graphql,
    operation: options.graphql.prepare({ query: DELIVERY_DOCUMENT }, ['subscription']),
    encoding: {
      name: 'webhook',
      encode: (result: ExecutionResult) => JSON.stringify(result.data?.searchTransactionsForward ?? null),
    },
    eventSteps: createEventSteps(options.stepStamp),
  }
  // Every process runs a dispatcher; the one holding the store's lease delivers.
  const dispatcher = new WebhookDispatcher({
    ...messages,
    post,
    sign,
    retries: options.retries,
    disableAfterMs: options.disableAfterMs,
    ownerRate: new OwnerRate(options.limits.deliveriesPerSecondPerKey, now),
    now,
    onDelivered: options.onDelivered,
    log: options.log,
  })
  dispatcher.start()
  const service = createWebhookService({
    store: options.store,
    messages,
    cursors: options.graphql.services.cursors,
    checkTarget: async (url) => void (await checkedTarget(url)),
    post,
    sign,
    limits: options.limits,
    notify: (restart) => dispatcher.notify(restart),
    now,
  })
  return {
    service,
    async close() {
      await dispatcher.close()
      await sender.close()
    },
  }
}
