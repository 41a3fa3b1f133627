import autocannon from 'autocannon'

/**
 * The load process of every HTTP bench (bench/children.ts `cannon`): forked with an IPC channel, it takes a LoadConfig
 * message, runs autocannon (programmatic API) and answers a LoadResult. Each connection goes through `requests` in
 * turn (one request: that one alone; two: interleaved, answer by answer). An answer counts only if it is 200, with the
 * length checked before the runs when one is given, and no GraphQL `"errors"`. Per-request latencies are autocannon's
 * per-answer times, assigned to their request (autocannon calls a request's onResponse just before it reports the time
 * of the same answer). The configuration comes over IPC: 1,500-scope bodies are too long for an argument.
 */

export interface LoadRequest {
  readonly method?: 'GET' | 'POST'
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  readonly expectLength?: number
}

export interface LoadConfig {
  readonly url: string
  readonly requests: readonly LoadRequest[]
  readonly connections: number
  readonly seconds: number
  /** A fixed rate, all connections together, req/s. */
  readonly rate?: number
  /** At most this many requests (pages that must each be asked once at most): the run may end early. */
  readonly stopAfter?: number
}

export interface LoadResult {
  /** Mean of autocannon's per-second samples (every answer). */
  readonly perSecond: number
  /** autocannon's percentiles of every answer, ms (1 ms resolution). */
  readonly p50: number
  readonly p99: number
  /** Good answers (all requests), and failures: other answers, answers of another length, errors and time-outs. */
  readonly answered: number
  readonly failed: number
  readonly failures: readonly string[]
  /** Answers by status, `200×1234 404×2`. */
  readonly codes: string
  /** Per request of the config: the good answers' times, ms. */
  readonly times: readonly (readonly number[])[]
  readonly seconds: number
}

process.once('message', (config: LoadConfig) => {
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
      ...(config.rate === undefined ? {} : { overallRate: config.rate }),
      ...(config.stopAfter === undefined ? {} : { maxOverallRequests: config.stopAfter }),
      requests: config.requests.map((r, i) => ({
        method: r.method ?? 'GET',
        path: r.path,
        headers: { ...r.headers },
        body: r.body,
        onResponse: (status: number, body: string) => {
          answering = undefined
          const length = r.expectLength === undefined || body.length === r.expectLength
          if (status === 200 && length && !body.startsWith('{"errors"')) return void (answering = i)
          bad++
          if (failures.length < 3)
            failures.push(
              `${status} ${r.path.slice(0, 120)}: ${body.length} chars (${r.expectLength}): ${body.slice(0, 200)}`,
            )
        },
      })),
    },
    (error, result) => {
      if (error) {
        console.error(error)
        process.exit(1)
      }
      const codes = Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => `${status}×${count}`)
      const out: LoadResult = {
        perSecond: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        answered: times.reduce((sum, t) => sum + t.length, 0),
        failed: bad + result.errors + result.timeouts,
        failures,
        codes: codes.join(' '),
        times,
        seconds: result.duration,
      }
      process.send!(out, () => process.exit(0))
    },
  )
  instance.on('response', (_client, _status, _bytes, responseTime: number) => {
    if (answering !== undefined) times[answering].push(responseTime)
    answering = undefined
  })
  process.once('SIGTERM', () => instance.stop())
})
process.on('disconnect', () => process.exit(0))
