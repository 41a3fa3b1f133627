export { createStateService, type StateService, type TableArgs, type HeightArgs, type TableAnswer, type TableRowAnswer, type MultiTableAnswer } from './service.ts'
export { type RowFormat, type WireRow } from './rows.ts'
export { firstStoredBlock } from './height.ts'
export { AppNotReadyError } from './errors.ts'
