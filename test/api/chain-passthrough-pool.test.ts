import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { chainPassthroughRoutes } from '../../src/api/routes/chain-passthrough.ts'
import { ErrorObject } from '../../src/api/schemas.ts'

/** A stand-in chain API that counts the TCP connections it was opened and answers each call with its path. */
async function countingChain(t: { after(fn: () => unknown): void }) {
  let connections = 0
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (d: Buffer) => (body += d))
    request.on('end', () => {
      // A little wait, so that calls overlap and need connections of their own.
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ path: request.url, body }))
      }, 5)
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/base`, connections: () => connections }
}

test('the passthrough keeps its connections to the chain open and reuses them: 200 concurrent calls, then 200 more, over at most 64 connections, each answered with its own body', async (t) => {
  const chain = await countingChain(t)
  const app = Fastify()
  app.addSchema(ErrorObject)
  await app.register(chainPassthroughRoutes, {
    chainApi: chain.url,
    timeoutMs: 60_000,
    bodyLimitBytes: 1024,
    open: true,
  })
  t.after(() => app.close())
  const batch = () =>
    Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        app.inject({ method: 'POST', url: `/v1/chain/get_info?n=${i}`, payload: `{"n":${i}}` }),
      ),
    )
  for (const [i, response] of (await batch()).entries()) {
    assert.equal(response.statusCode, 200, response.body)
    assert.deepEqual(response.json(), { path: `/base/v1/chain/get_info?n=${i}`, body: `{"n":${i}}` })
  }
  const afterFirst = chain.connections()
  assert.ok(afterFirst <= 64, `${afterFirst} connections for 200 concurrent calls`)
  await batch()
  assert.equal(chain.connections(), afterFirst, 'the second batch opened no connection: the first ones were reused')
})
