/**
 * A per-payload memo for the fan-out: what one subscription shape makes of one step (its messages, serialized) is
 * built once and shared by every subscriber of that shape. The hub hands the same payload object to every live
 * subscriber, so the payload is the key (weakly: entries go with the ring's step); payloads a subscription read on its
 * own (catching up) are other objects and share nothing. `key` must name everything the built value depends on
 * besides the payload. A failed build is forgotten, so the next subscriber tries again.
 */
export function createPayloadMemo<T>(): (payload: object, key: string, build: () => Promise<T>) => Promise<T> {
  const cache = new WeakMap<object, Map<string, Promise<T>>>()
  return (payload, key, build) => {
    let byKey = cache.get(payload)
    if (!byKey) cache.set(payload, (byKey = new Map()))
    let found = byKey.get(key)
    if (!found) {
      const entries = byKey
      found = build()
      entries.set(key, found)
      found.catch(() => entries.get(key) === found && entries.delete(key))
    }
    return found
  }
}
