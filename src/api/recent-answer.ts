/**
 * `build`, asked at most once per `ttlMs`: every call within that time of the last build shares its answer (also while
 * it is still being built). With `stamp`, a call whose stamp differs from the last build's builds again at once (the
 * answer follows what the stamp tracks, e.g. the live hub's last step). A build that fails is not kept, so the next
 * call builds again.
 */
export function recentAnswer<T>(ttlMs: number, build: () => Promise<T>, stamp?: () => unknown): () => Promise<T> {
  let last: { at: number; stamp: unknown; answer: Promise<T> } | undefined
  return () => {
    const now = performance.now()
    const current = stamp?.()
    if (last && now - last.at < ttlMs && last.stamp === current) return last.answer
    const answer = build()
    const entry = (last = { at: now, stamp: current, answer })
    answer.catch(() => {
      if (last === entry) last = undefined
    })
    return answer
  }
}
