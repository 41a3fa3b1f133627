export { AntlerError, InvalidChainValueError } from './errors.ts'
export {
  ERROR_REGISTRY,
  errorDefinitions,
  type ErrorCode,
  type ErrorArgs,
  type ErrorDetails,
} from './error-registry.ts'
export { type ErrorDefinition, type NoDetails } from './error-definition.ts'
export { type InvalidTokenReason, type InvalidApiKeyReason } from './error-codes/auth.ts'
export { type RequestValidationArgs, type NotReady } from './error-codes/http.ts'
export { isValidName, nameToBigInt, bigIntToName } from './names.ts'
export { symbolCodeToBigInt, bigIntToSymbolCode, symbolToBigInt, bigIntToSymbol } from './symbols.ts'
export { type KeyType, KEY_TYPES, isKeyType, renderKey, parseKey } from './key-types.ts'
export { sha256, toHex, fromHex } from './hash.ts'
export {
  blockIdFromPackedHeader,
  blockNumFromId,
  refBlockPrefix,
  refBlockNum,
  transactionId,
  signingDigest,
  packContextFreeData,
  isChecksum256,
} from './ids.ts'
export {
  BLOCK_TIMESTAMP_EPOCH_MS,
  BLOCK_INTERVAL_MS,
  blockSlotToMs,
  msToBlockSlot,
  formatNodeosTime,
  formatNodeosTimeSec,
  formatRfc3339,
  parseTime,
} from './time.ts'
export { type BlockRef, sameBlock, compareBlockRefs } from './block-ref.ts'
export {
  type DecodeResult,
  type AbiDecoder,
  createWharfkitDecoder,
  decodeAbiBinary,
  encodeAbiBinary,
  actionType,
  tableType,
  abiToJson,
} from './abi.ts'
export { canonicalPublicKey } from './public-keys.ts'
export { CompiledAbi } from './abi-compiled.ts'
export { AbiCache } from './abi-cache.ts'
export { BinaryWriter, BinaryReader, BinaryDecodeError } from './binary.ts'
export { readName, readPublicKey } from './binary-values.ts'
export { type RawAction, packAction, actionDigest } from './action-digest.ts'
export { legacyMerkleRoot } from './merkle.ts'
export {
  type TransactionReceiptParts,
  transactionReceiptDigest,
  type ActionReceiptParts,
  actionReceiptDigest,
} from './receipt-digest.ts'
export { signatureText, unpackTransaction, type UnpackedTransaction, type UnpackedAction } from './transactions.ts'
export { newTraceId, traceIdSource } from './trace-id.ts'
export {
  createFailureLog,
  FAILURE_LOG_WINDOW_MS,
  type FailureLog,
  type FailureLogger,
  type FailureReport,
} from './failure-log.ts'
