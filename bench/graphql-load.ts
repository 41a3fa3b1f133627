import autocannon from 'autocannon'

/**
 * The load process of bench/graphql.ts: `node graphql-load.ts '<LoadConfig JSON>'` runs autocannon (programmatic API)
 * against one request and prints a LoadResult as the last line of stdout. An answer counts only if it is 200 with the
 * length of the answer checked before the runs (and, for GraphQL, no `"errors"`).
 */

export interface LoadConfig {
  readonly url: string
  readonly method: 'GET' | 'POST'
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  readonly expectLength: number
  readonly connections: number
  readonly seconds: number
}

export interface LoadResult {
  /** Mean of autocannon's per-second samples. */
  readonly perSecond: number
  /** autocannon's percentiles, ms (1 ms resolution). */
  readonly p50: number
  readonly p99: number
  readonly answered: number
  /** Non-200 answers, answers of another length, errors and time-outs. */
  readonly failed: number
  readonly failures: readonly string[]
}

const config = JSON.parse(process.argv[2]) as LoadConfig
let bad = 0
const failures: string[] = []
const instance = autocannon(
  {
    url: config.url,
    connections: config.connections,
    duration: config.seconds,
    timeout: 30,
    requests: [
      {
        method: config.method,
        path: config.path,
        headers: { ...config.headers },
        body: config.body,
        onResponse: (status: number, body: string) => {
          if (status === 200 && body.length === config.expectLength && !body.startsWith('{"errors"')) return
          bad++
          if (failures.length < 3) failures.push(`${status}, ${body.length} chars: ${body.slice(0, 200)}`)
        },
      },
    ],
  },
  (error, result) => {
    if (error) {
      console.error(error)
      process.exit(1)
    }
    const answered = result['2xx'] - bad
    const out: LoadResult = {
      perSecond: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      answered,
      failed: bad + result.non2xx + result.errors + result.timeouts,
      failures,
    }
    process.stdout.write(`${JSON.stringify(out)}\n`)
  },
)
process.once('SIGTERM', () => instance.stop())
