import type { LifecycleService } from '../lifecycle/index.ts'
import type { LiveHub } from '../live/index.ts'
import type { SearchService } from '../search/index.ts'
import type { StateService } from '../state/index.ts'
import type { Store } from '../store/index.ts'

/** What Hyperion's routes and its `/stream` socket read: the services dfuse's routes use, over the same store. */
export interface HyperionServices {
  /** Blocks, actions, search postings, contract state, permissions and ABIs: read only, never written here. */
  readonly store: Store
  readonly search: SearchService
  readonly state: StateService
  readonly lifecycle: LifecycleService
  /** The live hub: history then live steps, with undo steps on forks (the `/stream` socket). */
  readonly live: LiveHub
  /** The chain API (nodeos's `/v1/chain`), for what only the chain knows; undefined when the API runs without one. */
  readonly chainApi: string | undefined
  readonly chainTimeoutMs: number
}
