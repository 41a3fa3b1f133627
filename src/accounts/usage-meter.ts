import { Counter, type Registry } from 'prom-client'
import type { UsageOutcome, UsageRecorder } from './usage-recorder.ts'

/**
 * Per-key usage as every transport reports it: REST responses, GraphQL over HTTP, WebSocket and gRPC, `/v1/stream`
 * and webhook deliveries. One meter feeds both the portal's usage (the recorder) and `/metrics`
 * (`antler_key_requests_total{key_id,outcome}`, `antler_key_documents_total{key_id}`), so the two agree.
 */
export interface UsageMeter {
  /** One request (a call, an operation, a stream request) of a key by its outcome, with the documents it served. */
  request(keyId: string, outcome: UsageOutcome, documents: number): void
  /** Documents an open stream, subscription or webhook of a key sent after its request was counted. */
  documents(keyId: string, count: number): void
  /** Notes a use of the key (a token issued, a call admitted). */
  used(keyId: string): void
  /** Registers the meter's counters in an app's registry (served at `/metrics`). */
  register(registry: Registry): void
}

/** A meter over `recorder` (absent: a read-only SQLite store keeps no usage; `/metrics` still counts). */
export function createUsageMeter(recorder: UsageRecorder | undefined): UsageMeter {
  const requests = new Counter({
    name: 'antler_key_requests_total',
    help: 'Requests by API key and outcome (ok, clientErrors, authFailures, rateLimited), as the portal counts them',
    labelNames: ['key_id', 'outcome'],
    registers: [],
  })
  const documents = new Counter({
    name: 'antler_key_documents_total',
    help:
      'Documents served by API key (search results, table rows, stream and subscription messages, webhook ' +
      'deliveries; 1 per other answer), as the portal counts them',
    labelNames: ['key_id'],
    registers: [],
  })
  // Labelled series looked up once each (prom-client hashes an object's labels on every inc).
  const requestSeries = new Map<string, Counter.Internal>()
  const documentSeries = new Map<string, Counter.Internal>()
  const series = (map: Map<string, Counter.Internal>, key: string, make: () => Counter.Internal) =>
    map.get(key) ?? map.set(key, make()).get(key)!
  const addDocuments = (keyId: string, count: number) => {
    if (count > 0) series(documentSeries, keyId, () => documents.labels({ key_id: keyId })).inc(count)
  }
  return {
    request(keyId, outcome, served) {
      const counted = outcome === 'ok' ? served : 0
      recorder?.count(keyId, outcome, counted)
      series(requestSeries, `${keyId} ${outcome}`, () => requests.labels({ key_id: keyId, outcome })).inc()
      addDocuments(keyId, counted)
    },
    documents(keyId, count) {
      if (count <= 0) return
      recorder?.documents(keyId, count)
      addDocuments(keyId, count)
    },
    used(keyId) {
      recorder?.used(keyId)
    },
    register(registry) {
      registry.registerMetric(requests)
      registry.registerMetric(documents)
    },
  }
}
