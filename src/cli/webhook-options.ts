import { InvalidArgumentError, type Command } from 'commander'
import {
  DEFAULT_WEBHOOK_LIMITS,
  DEFAULT_WEBHOOK_RETRIES,
  parseAllowCidrs,
  parseDuration,
  parseRetrySchedule,
  type AllowList,
  type RetrySchedule,
} from '../webhooks/index.ts'
import { option, parseIntArg } from './options.ts'

/** The webhook flags of `dev`, `serve` and `api` (docs/WEBHOOKS.md). */
export interface WebhookFlags {
  readonly webhookRetries: RetrySchedule
  /** Absent: the command's default (`dev`: loopback; `serve`, `api`: none). */
  readonly webhookAllowCidr?: AllowList
  readonly webhookDisableAfter: number
  readonly webhookDeliveryRate: number
  readonly webhookMaxSubscriptions: number
}

/** Commander's form of a parser that throws plain errors. */
const commanderParser =
  <T>(parse: (value: string) => T) =>
  (value: string): T => {
    try {
      return parse(value)
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message)
    }
  }

/** `--webhook-disable-after`'s default: 5 days of continuous failures. */
const DEFAULT_DISABLE_AFTER_MS = 5 * 86_400_000

/** The flags' defaults, for code that starts an API without parsing a command line (tests). */
export const DEFAULT_WEBHOOK_FLAGS: WebhookFlags = {
  webhookRetries: parseRetrySchedule(DEFAULT_WEBHOOK_RETRIES),
  webhookDisableAfter: DEFAULT_DISABLE_AFTER_MS,
  webhookDeliveryRate: 500,
  webhookMaxSubscriptions: DEFAULT_WEBHOOK_LIMITS.maxSubscriptionsPerKey,
}

/** Adds the webhook flags. */
export function addWebhookOptions(command: Command): Command {
  option(
    command,
    '--webhook-retries <delays>',
    `delays between tries of a failed delivery, the last repeating (default ${DEFAULT_WEBHOOK_RETRIES})`,
    commanderParser(parseRetrySchedule),
    parseRetrySchedule(DEFAULT_WEBHOOK_RETRIES),
  )
  option(
    command,
    '--webhook-allow-cidr <list>',
    'addresses deliveries may reach although private: none, loopback, or CIDRs (default: dev loopback, else none)',
    commanderParser(parseAllowCidrs),
    undefined,
  )
  option(
    command,
    '--webhook-disable-after <duration>',
    'disable a subscription failing continuously this long (e.g. 5d, 12h)',
    commanderParser(parseDuration),
    DEFAULT_DISABLE_AFTER_MS,
  )
  option(
    command,
    '--webhook-delivery-rate <n>',
    'deliveries per second per API key, over all its subscriptions',
    parseIntArg(1, 100_000),
    DEFAULT_WEBHOOK_FLAGS.webhookDeliveryRate,
  )
  option(
    command,
    '--webhook-max-subscriptions <n>',
    'webhook subscriptions per API key',
    parseIntArg(1, 1_000_000),
    DEFAULT_WEBHOOK_LIMITS.maxSubscriptionsPerKey,
  )
  return command
}
