import type { Logger } from 'pino'
import type { Store } from '../store/index.ts'

type ListenForSteps = NonNullable<Store['listenForSteps']>

export interface StepNotificationsOptions {
  readonly listen: ListenForSteps
  /** Called on every notification, on every fallback tick and once each time listening (re)starts. */
  readonly wake: () => void
  readonly logger: Logger
  /** How often the hub is woken while no notification can arrive (the connection is lost). */
  readonly fallbackPollMs?: number
  /** How long after losing the connection (or failing to listen) listening is tried again. */
  readonly retryMs?: number
}

export interface StepNotifications {
  /** Whether notifications arrive now (false while polling in their place). */
  listening(): boolean
  stop(): Promise<void>
}

/** Fallback polling matches the hub's default pace (docs/ARCHITECTURE.md); listening is retried every 2 s. */
export const STEP_NOTIFICATION_DEFAULTS = { fallbackPollMs: 200, retryMs: 2000 } as const

/**
 * Keeps a replica's live hub woken by the store's step notifications (PostgreSQL LISTEN/NOTIFY). While the
 * listening connection is up, nothing polls; once it is lost (or cannot start), the hub is woken every
 * `fallbackPollMs` and listening is tried again every `retryMs`. Each (re)start wakes the hub once, so what committed
 * while nobody listened is read at once.
 */
export async function followStepNotifications(options: StepNotificationsOptions): Promise<StepNotifications> {
  const { listen, wake, logger } = options
  const fallbackPollMs = options.fallbackPollMs ?? STEP_NOTIFICATION_DEFAULTS.fallbackPollMs
  const retryMs = options.retryMs ?? STEP_NOTIFICATION_DEFAULTS.retryMs
  let stopListening: (() => Promise<void>) | undefined
  let pollTimer: NodeJS.Timeout | undefined
  let retryTimer: NodeJS.Timeout | undefined
  let stopped = false
  /** A failure while a try is starting is that try's to handle (it throws), not a loss. */
  let starting = false

  const startPolling = () => {
    pollTimer ??= setInterval(wake, fallbackPollMs)
  }
  const stopPolling = () => {
    clearInterval(pollTimer)
    pollTimer = undefined
  }
  const lost = (error: unknown) => {
    stopListening = undefined
    if (stopped || starting) return
    logger.warn(
      { reason: (error as Error).message, poll_ms: fallbackPollMs },
      'live hub: step notifications lost; polling the store until listening again',
    )
    startPolling()
    scheduleRetry()
  }
  const scheduleRetry = () => {
    clearTimeout(retryTimer)
    retryTimer = setTimeout(() => void attempt(true), retryMs)
  }
  /** One try at listening; on failure the hub keeps polling and the next try is scheduled. */
  const attempt = async (again: boolean): Promise<void> => {
    if (stopped) return
    starting = true
    try {
      const stop = await listen(wake, lost)
      starting = false
      if (stopped) return void (await stop())
      stopListening = stop
      stopPolling()
      if (again) logger.info('live hub: listening for step notifications again')
      wake()
    } catch (error) {
      starting = false
      if (!again)
        logger.warn(
          { reason: (error as Error).message, poll_ms: fallbackPollMs },
          'live hub: cannot listen for step notifications; polling the store',
        )
      startPolling()
      scheduleRetry()
    }
  }

  await attempt(false)
  return {
    listening: () => stopListening !== undefined,
    async stop() {
      stopped = true
      stopPolling()
      clearTimeout(retryTimer)
      await stopListening?.()
      stopListening = undefined
    },
  }
}
