/**
 * A cache bounded by entries and by a weight (what each entry costs, as `weigh` counts it), least recently used out
 * first: a Map keeps insertion order, and a hit is moved to the end. For content that never changes (irreversible
 * blocks' facts), so nothing in it is ever invalidated.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>()
  private held = 0
  hits = 0
  misses = 0

  constructor(
    readonly maxEntries: number,
    readonly maxWeight: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const found = this.entries.get(key)
    if (!found) {
      this.misses++
      return undefined
    }
    this.hits++
    this.entries.delete(key)
    this.entries.set(key, found)
    return found.value
  }

  /** Keeps `value` under `key` (replacing what was there), then drops the least recently used past either bound. */
  set(key: K, value: V): void {
    const weight = this.weigh(value)
    const old = this.entries.get(key)
    if (old) {
      this.entries.delete(key)
      this.held -= old.weight
    }
    // One entry heavier than the whole bound would empty the cache: it is not kept.
    if (this.maxEntries < 1 || weight > this.maxWeight) return
    this.entries.set(key, { value, weight })
    this.held += weight
    while (this.entries.size > this.maxEntries || this.held > this.maxWeight) {
      const [oldest, evicted] = this.entries.entries().next().value as [K, { value: V; weight: number }]
      this.entries.delete(oldest)
      this.held -= evicted.weight
    }
  }

  get size(): number {
    return this.entries.size
  }

  /** The weight held, as `weigh` counts it. */
  get weight(): number {
    return this.held
  }
}
