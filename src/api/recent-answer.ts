/**
 * `build`, asked at most once per `ttlMs`: every call within that time of the last build shares its answer (also while
 * it is still being built). A build that fails is not kept, so the next call builds again.
 */
export function recentAnswer<T>(ttlMs: number, build: () => Promise<T>): () => Promise<T> {
  let last: { at: number; answer: Promise<T> } | undefined
  return () => {
    const now = performance.now()
    if (last && now - last.at < ttlMs) return last.answer
    const answer = build()
    const entry = (last = { at: now, answer })
    answer.catch(() => {
      if (last === entry) last = undefined
    })
    return answer
  }
}
