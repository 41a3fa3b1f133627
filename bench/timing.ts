/** Latency percentiles of `runs` sequential calls, in milliseconds, after `warmup` untimed calls. */
export async function timeIt(
  runs: number,
  fn: () => Promise<unknown>,
  warmup = 0,
): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < warmup; i++) await fn()
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await fn()
    samples.push(performance.now() - started)
  }
  samples.sort((a, b) => a - b)
  return { p50: samples[Math.floor(runs * 0.5)], p99: samples[Math.floor(runs * 0.99)] }
}

export const ms = (x: { p50: number; p99: number }) => `p50 ${x.p50.toFixed(2)} ms, p99 ${x.p99.toFixed(2)} ms`

/** The `q` quantile (0–1) of ascending `sorted` samples (nearest rank below); NaN when there are none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]
}
