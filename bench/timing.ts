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
