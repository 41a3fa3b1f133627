import { AbiCache, fromHex, type CompiledAbi, type DecodeResult } from '../antelope/index.ts'
import { blockSearchTerms, dataSearchTerms, type ActionRecord, type BlockBatch } from '../store/index.ts'

/** Where ABIs not yet seen come from: the store, at its head. */
export type AbiSource = (account: string) => Promise<Uint8Array | undefined>

/**
 * The ABI of each contract as ingest reaches it, so action data is decoded with the ABI in force
 * at that action (a `setabi` applies to the actions after it). Bounded: the least recently used
 * accounts are dropped and reloaded from the store, except those changed by blocks not yet
 * written (the store does not have those ABIs yet).
 */
export class AbiTracker {
  private readonly current = new Map<string, CompiledAbi | null>()
  /** Accounts whose ABI changed in blocks not yet written, with the number of the last such change. */
  private readonly unwritten = new Map<string, number>()
  private changes = 0
  private readonly cache = new AbiCache()
  /** The last action decoded: its notifications (same act digest) follow it and reuse the result. */
  private lastDecoded:
    | { readonly actDigest: string; readonly decoded: DecodeResult | undefined; readonly dataTerms: readonly string[] }
    | undefined

  constructor(
    private readonly source: AbiSource,
    private readonly capacity = 2_000,
  ) {}

  /** Loads the ABIs of these accounts that are not held yet. */
  async preload(accounts: Iterable<string>): Promise<void> {
    for (const account of accounts) {
      if (this.current.has(account)) continue
      const bytes = await this.source(account)
      this.remember(account, bytes && bytes.length ? bytes : undefined)
    }
  }

  /**
   * Search terms for every action of the batch, decoding data with the ABI in force at each; the
   * block's row changes and each action's parent give its `db.*` and `parent.*` terms.
   */
  withSearchTerms(batch: BlockBatch, creators?: ReadonlyMap<string, string>): BlockBatch {
    const dataTerms = batch.actions.map((action) => {
      const { decoded, dataTerms } = this.decode(action)
      if (action.account === 'eosio' && action.name === 'setabi' && action.receiver === 'eosio' && decoded?.ok) {
        const { account, abi: hex } = decoded.value as { account: string; abi: string }
        this.change(account, fromHex(hex))
      }
      return dataTerms
    })
    for (const change of batch.abis) this.change(change.account, change.abi)
    const terms = blockSearchTerms(batch.actions, batch.rows, (i) => dataTerms[i], creators)
    return { ...batch, actions: batch.actions.map((action, i) => ({ ...action, searchTerms: terms[i] })) }
  }

  private decode(action: ActionRecord): { decoded: DecodeResult | undefined; dataTerms: readonly string[] } {
    if (this.lastDecoded?.actDigest === action.actDigest) return this.lastDecoded
    const abi = this.current.get(action.account)
    const type = abi?.actionType(action.name)
    const decoded = abi && type ? abi.decode(type, action.data) : undefined
    this.lastDecoded = { actDigest: action.actDigest, decoded, dataTerms: dataSearchTerms(action, decoded) }
    return this.lastDecoded
  }

  /** A mark of the ABI changes seen so far, for `written` once the blocks holding them are stored. */
  mark(): number {
    return this.changes
  }

  /** The store now holds every ABI change up to `mark` (later ones may still be in flight). */
  written(mark: number): void {
    for (const [account, change] of this.unwritten) if (change <= mark) this.unwritten.delete(account)
    this.trim()
  }

  /** Blocks were undone: what is held may be ABIs of forked-out blocks. */
  reset(): void {
    this.lastDecoded = undefined
    this.current.clear()
    this.unwritten.clear()
  }

  private change(account: string, bytes: Uint8Array): void {
    this.lastDecoded = undefined
    this.unwritten.set(account, ++this.changes)
    this.remember(account, bytes.length ? bytes : undefined)
  }

  private remember(account: string, bytes: Uint8Array | undefined): void {
    const compiled = bytes ? this.cache.fromBinary(bytes) : undefined
    this.current.delete(account)
    this.current.set(account, compiled?.ok ? compiled.value : null)
    this.trim()
  }

  private trim(): void {
    for (const account of this.current.keys()) {
      if (this.current.size <= this.capacity) return
      if (!this.unwritten.has(account)) this.current.delete(account)
    }
  }
}
