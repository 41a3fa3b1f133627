export { type PushGuarantee, parsePushGuarantee, formatPushGuarantee } from './guarantee.ts'
export {
  type PushResult,
  type PushService,
  type PushServiceDeps,
  type PushStore,
  createPushService,
} from './service.ts'
export { type PackedTransactionFacts, readPackedTransaction } from './packed.ts'
export {
  PushInvalidTransactionError,
  PushChainError,
  PushChainUnavailableError,
  PushTransactionExpiredError,
  PushTransactionFailedError,
  PushTimeoutError,
} from './errors.ts'
