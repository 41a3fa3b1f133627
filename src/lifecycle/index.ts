export type {
  LifecycleService,
  TransactionLifecycle,
  TransactionStatus,
  WireActionTrace,
  WireSignedTransaction,
} from './types.ts'
export { createLifecycleService, type LifecycleStore } from './service.ts'
export { DataTrxAppearanceTimeoutError, DataTrxNotFoundError } from './errors.ts'
export { actionTree, wireAction, type ActionDataDecoder, type TracedAction } from './action-traces.ts'
export {
  createBlockDecoderSource,
  createDecoderSource,
  type BlockDecoderSource,
  type DecoderSource,
} from './decoder.ts'
export {
  addRunners,
  attributeRowChanges,
  receiversOfOthers,
  receiversRunByOthers,
  type ReceiverRunners,
} from './row-attribution.ts'
export { FINAL_CACHE_LIMITS, FinalLifecycleCache, isFinal, type FinalCacheLimits } from './final-cache.ts'
export { BoundedCache } from './bounded-cache.ts'
