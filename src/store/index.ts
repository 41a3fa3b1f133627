export type * from './types.ts'
export type { Store, StoreWriter, StateReader, BlockReader, StepReader, StoreVerifier } from './port.ts'
export { StoreLinkError, StoreIrreversibleUndoError } from './errors.ts'
export { openSqliteStore } from './sqlite/sqlite-store.ts'
