import os from 'node:os'

/** Every figure a bench prints: a name and its value. */
export type Figures = Record<string, string | number>

/** The `q` quantile (0–1) of ascending `sorted` samples (nearest rank below); NaN when there are none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]
}

/** The median of `xs` (the mean of the two middle ones when their number is even); NaN when there are none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export const mean = (xs: readonly number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length

export interface Percentiles {
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly samples: number
}

/** p50, p99 and max of unsorted samples (NaN without samples). */
export function percentiles(xs: readonly number[]): Percentiles {
  const sorted = Array.from(Float64Array.from(xs).sort())
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: percentile(sorted, 1), samples: xs.length }
}

/** Latency percentiles of `runs` sequential calls, in milliseconds, after `warmup` untimed calls. */
export async function timeIt(runs: number, fn: () => Promise<unknown>, warmup = 0): Promise<Percentiles> {
  for (let i = 0; i < warmup; i++) await fn()
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await fn()
    samples.push(performance.now() - started)
  }
  return percentiles(samples)
}

/**
 * `reads` cycled one at a time for `seconds` (at least 5 calls): latency percentiles, and what the calls returned
 * (rows, say) per second.
 */
export async function loop(reads: readonly (() => Promise<number>)[], seconds: number) {
  const samples: number[] = []
  let total = 0
  const started = performance.now()
  for (let i = 0; samples.length < 5 || performance.now() < started + seconds * 1000; i++) {
    const t = performance.now()
    total += await reads[i % reads.length]()
    samples.push(performance.now() - t)
  }
  return { ...percentiles(samples), perSecond: total / ((performance.now() - started) / 1000) }
}

export const ms = (x: { p50: number; p99: number }) => `p50 ${x.p50.toFixed(2)} ms, p99 ${x.p99.toFixed(2)} ms`
export const msMax = (p: Percentiles) => `p50 ${f1(p.p50)} ms, p99 ${f1(p.p99)} ms, max ${f1(p.max)} ms`
export const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
export const f1 = (n: number) => n.toFixed(1)
/** `mine` − `limit`, signed, one decimal. */
export const gap = (mine: number, limit: number) => `${mine - limit >= 0 ? '+' : ''}${f1(mine - limit)}`
export const held = (ok: boolean) => (ok ? 'holds' : 'NOT HELD')
export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')

/** A CPU share: seconds of CPU over a span of `ms`, as percent of one core (undefined without both readings). */
export function cpuPercent(from: number | undefined, to: number | undefined, ms: number): number | undefined {
  return from === undefined || to === undefined ? undefined : ((to - from) / (ms / 1000)) * 100
}

/** Server CPU per answer over runs, ms, weighted by how many each answered; undefined if a run has no reading. */
export function cpuPerAnswer(runs: readonly { serverCpuMs?: number; answered: number }[]): number | undefined {
  if (runs.some((r) => r.serverCpuMs === undefined)) return undefined
  return runs.reduce((s, r) => s + r.serverCpuMs! * r.answered, 0) / runs.reduce((s, r) => s + r.answered, 0)
}

/** `rounds` rounds over `items`, the order rotated each round: a shared machine's drifts fall on every one alike. */
export async function takeTurns<T>(
  items: readonly T[],
  rounds: number,
  run: (item: T, round: number) => Promise<void>,
) {
  for (let round = 0; round < rounds; round++)
    for (let i = 0; i < items.length; i++) await run(items[(round + i) % items.length], round)
}
