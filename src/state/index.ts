export {
  createStateService,
  type StateService,
  type TableArgs,
  type HeightArgs,
  type TableAnswer,
  type TableRowAnswer,
  type MultiTableAnswer,
  type PermissionLinksAnswer,
} from './service.ts'
export { type RowFormat, type WireRow } from './rows.ts'
export { firstStoredBlock } from './height.ts'
export { AppNotReadyError, BlockNumNotCoveredError } from './errors.ts'
