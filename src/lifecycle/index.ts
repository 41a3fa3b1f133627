export type { LifecycleService, TransactionLifecycle, TransactionStatus } from './types.ts'
export { createLifecycleService, type LifecycleStore } from './service.ts'
export { DataTrxNotFoundError } from './errors.ts'
