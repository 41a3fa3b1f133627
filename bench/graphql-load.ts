import autocannon from 'autocannon'

/**
 * The load process of bench/graphql.ts: `node graphql-load.ts '<LoadConfig JSON>'` runs autocannon (programmatic API)
 * and prints a LoadResult as the last line of stdout. Each connection goes through `requests` in turn (one request:
 * that one alone; two: interleaved, answer by answer). An answer counts only if it is 200 with the length of the answer
 * checked before the runs (and, for GraphQL, no `"errors"`). Latencies are autocannon's per-answer times, assigned to
 * their request (autocannon calls a request's onResponse just before it reports the time of the same answer).
 */

export interface LoadRequest {
  readonly method: 'GET' | 'POST'
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  readonly expectLength: number
}

export interface LoadConfig {
  readonly url: string
  readonly requests: readonly LoadRequest[]
  readonly connections: number
  readonly seconds: number
}

export interface LoadLatency {
  /** ms, from every answer of the request. */
  readonly p50: number
  readonly p99: number
  /** Good answers per second. */
  readonly perSecond: number
}

export interface LoadResult {
  /** Good answers (all requests), and failures: non-200 answers, answers of another length, errors and time-outs. */
  readonly answered: number
  readonly failed: number
  readonly failures: readonly string[]
  /** One per request of the config. */
  readonly latencies: readonly LoadLatency[]
}

const config = JSON.parse(process.argv[2]) as LoadConfig
let bad = 0
const failures: string[] = []
const times = config.requests.map(() => [] as number[])
let answering: number | undefined
const instance = autocannon(
  {
    url: config.url,
    connections: config.connections,
    duration: config.seconds,
    timeout: 30,
    requests: config.requests.map((r, i) => ({
      method: r.method,
      path: r.path,
      headers: { ...r.headers },
      body: r.body,
      onResponse: (status: number, body: string) => {
        answering = undefined
        if (status === 200 && body.length === r.expectLength && !body.startsWith('{"errors"')) {
          answering = i
          return
        }
        bad++
        if (failures.length < 3) failures.push(`${status}, ${body.length} chars: ${body.slice(0, 200)}`)
      },
    })),
  },
  (error, result) => {
    if (error) {
      console.error(error)
      process.exit(1)
    }
    const seconds = result.duration
    const out: LoadResult = {
      answered: times.reduce((sum, t) => sum + t.length, 0),
      failed: bad + result.non2xx + result.errors + result.timeouts,
      failures,
      latencies: times.map((t) => {
        const sorted = Float64Array.from(t).sort()
        const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN
        return { p50: at(0.5), p99: at(0.99), perSecond: t.length / seconds }
      }),
    }
    process.stdout.write(`${JSON.stringify(out)}\n`)
  },
)
instance.on('response', (_client, _status, _bytes, responseTime: number) => {
  if (answering !== undefined) times[answering].push(responseTime)
  answering = undefined
})
process.once('SIGTERM', () => instance.stop())
