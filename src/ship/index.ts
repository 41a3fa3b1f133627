export { SHIP_ABI, SHIP_ABI_TEXT, encodeShipType, decodeShipType } from './abi.ts'
export type * from './types.ts'
export {
  type BlocksRequest,
  type ShipRequestMessage,
  type StatusResult,
  type BlocksResult,
  type ShipResultMessage,
  encodeRequest,
  decodeRequest,
  encodeStatusResult,
  encodeBlocksResult,
  decodeResult,
} from './codec.ts'
export {
  createShipReader,
  ShipProtocolError,
  ShipUnavailableError,
  type ShipReader,
  type ShipReaderConfig,
  type ShipReaderEvent,
} from './reader.ts'
export {
  decodeTransactionTraces,
  decodeTableDeltas,
  decodeContractRow,
  decodeAccountRow,
  decodeGeneratedTransactionRow,
  decodePermissionRow,
  decodePermissionLinkRow,
  type TransactionTraceValue,
  type PartialTransactionValue,
  type ActionTraceValue,
  type TableDeltaValue,
  type ActionReceiptValue,
  type PermissionLevelValue,
} from './fast-decode.ts'
export {
  decodeFinalityData,
  decodeFinalityExtension,
  SAVANNA_SCHEDULE_VERSION,
  FINALITY_EXTENSION_ID,
  type FinalityDataValue,
  type FinalityExtensionValue,
  type FinalizerAuthorityValue,
  type FinalizerPolicyValue,
  type ProducerAuthorityValue,
} from './finality-decode.ts'
export { ShipHistoryGapError } from './errors.ts'
export { checkShipAbi, shipAbiProblems } from './guard.ts'
