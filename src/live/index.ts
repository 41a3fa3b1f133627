export type {
  LiveHub,
  LiveHubOptions,
  LiveStep,
  StepSource,
  SubscribeArgs,
  Subscription,
  SubscriptionState,
} from './types.ts'
export { createLiveHub, LIVE_HUB_DEFAULTS } from './hub.ts'
export { StreamConsumerTooSlowError } from './errors.ts'
export { payloadBytes } from './sizes.ts'
export { createPayloadMemo } from './memo.ts'
