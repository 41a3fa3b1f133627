/**
 * A first-in first-out list with O(1) push and shift (amortized) and indexed reads, for the ring and the subscription
 * queues.
 */
export class Fifo<T> {
  private items: T[] = []
  private head = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(item: T): void {
    this.items.push(item)
  }

  /** The i-th item from the oldest (0). */
  at(i: number): T {
    return this.items[this.head + i]
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head]
    this.items[this.head++] = undefined as T
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }

  /** Removes and returns up to `n` of the oldest items. */
  take(n: number): T[] {
    const out: T[] = []
    while (out.length < n && this.length > 0) out.push(this.shift() as T)
    return out
  }

  clear(): void {
    this.items = []
    this.head = 0
  }
}
