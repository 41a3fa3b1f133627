import { createDecoderSource, type LifecycleService } from '../../lifecycle/index.ts'
import type { StateService } from '../../state/index.ts'
import type { Store } from '../../store/index.ts'
import { actionTracesHandler } from './action-traces.ts'
import type { StreamHandler } from './connection.ts'
import type { StreamRequestType } from './envelope.ts'
import type { FeedStore, StepFeed } from './feed.ts'
import { headInfoHandler } from './head-info.ts'
import { tableRowsHandler } from './table-rows.ts'
import { transactionLifecycleHandler } from './transaction-lifecycle.ts'

/**
 * What the stream requests read: the store (blocks, steps, payloads, ABIs, id prefixes), the live hub, state and
 * lifecycles.
 */
export interface StreamServices {
  readonly store: FeedStore & Pick<Store, 'transactionsByIdPrefix' | 'abi'>
  readonly feed: StepFeed
  readonly state: StateService
  readonly lifecycle: LifecycleService
}

export type StreamHandlers = Readonly<Record<Exclude<StreamRequestType, 'unlisten'>, StreamHandler>>

/** One handler per request type, sharing one ABI decoder cache. */
export function createStreamHandlers(services: StreamServices): StreamHandlers {
  const decoders = createDecoderSource(services.store)
  const deps = { store: services.store, feed: services.feed }
  return {
    get_action_traces: actionTracesHandler({ ...deps, decoders }),
    get_table_rows: tableRowsHandler({ ...deps, state: services.state, decoders }),
    get_transaction_lifecycle: transactionLifecycleHandler({ ...deps, lifecycle: services.lifecycle }),
    get_head_info: headInfoHandler(deps),
  }
}
