import { AntlerError } from '../antelope/index.ts'

/**
 * A subscriber fell too far behind the live steps: its undelivered steps or bytes passed the hub's
 * bound, so it was dropped to keep the server's memory bounded. dfuse has no code for this; the
 * code names the stream, not the transport (WebSocket and GraphQL subscriptions share the hub).
 */
export function StreamConsumerTooSlowError(args: {
  queuedSteps: number
  queuedBytes: number
  maxQueuedSteps: number
  maxQueuedBytes: number
  deliveredSeq: number
}): AntlerError {
  return new AntlerError('stream_consumer_too_slow_error', {
    queued_steps: args.queuedSteps,
    queued_bytes: args.queuedBytes,
    max_queued_steps: args.maxQueuedSteps,
    max_queued_bytes: args.maxQueuedBytes,
    delivered_seq: args.deliveredSeq,
  })
}
