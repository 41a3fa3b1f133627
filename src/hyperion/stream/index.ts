// Hyperion's socket.io streaming (the API's `/stream`): what the transport uses.
export { planStream, type StreamPlan } from './plan.ts'
export {
  parseActionRequest,
  parseDeltaRequest,
  StreamRequestError,
  type ActionStreamRequest,
  type DeltaStreamRequest,
  type StreamRequest,
} from './request.ts'
export { runStream, type RunningStream } from './runner.ts'
export { createBlockDocumentMemo, type BlockDocumentMemo } from './live.ts'
export type { ForkEvent, HistoryBatch, StreamDeps, StreamSink, TraceType } from './types.ts'
