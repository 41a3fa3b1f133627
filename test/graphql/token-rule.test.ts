import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Metadata } from '@grpc/grpc-js'
import type { FastifyRequest } from 'fastify'
import { presentedToken, tokenForAdmission } from '../../src/api/plugins/auth.ts'
import { authorizationToken } from '../../src/auth/index.ts'
import { presentedGrpcToken } from '../../src/graphql/grpc-wire.ts'

// One Bearer rule for every transport that reads a token (src/auth/presented-token.ts): an HTTP request's (and so a
// WebSocket upgrade's) Authorization header, a GraphQL WebSocket's connection_init, gRPC metadata.

const CASES: [string, string | undefined][] = [
  ['Bearer abc', 'abc'],
  ['bearer abc', 'abc'],
  ['  Bearer   abc  ', 'abc'],
  ['abc', 'abc'],
  ['Bearer', 'malformed'],
  ['Bearer a b', 'malformed'],
  ['Basic dXNlcjpwYXNz', 'malformed'],
  ['', undefined],
]

const httpRequest = (authorization: string) =>
  ({
    headers: { authorization },
    query: {},
    raw: { rawHeaders: ['authorization', authorization] },
  }) as unknown as FastifyRequest

test('the one Bearer rule: HTTP, connection_init and gRPC metadata read a value alike', () => {
  for (const [value, expected] of CASES) {
    assert.equal(authorizationToken([value]), expected, `the rule: ${JSON.stringify(value)}`)
    const metadata = new Metadata()
    metadata.set('authorization', value)
    assert.equal(presentedGrpcToken(metadata), expected, `gRPC: ${JSON.stringify(value)}`)
    assert.equal(tokenForAdmission(httpRequest(value)), expected, `HTTP: ${JSON.stringify(value)}`)
  }
  // Two values are malformed everywhere (a proxy may have joined or repeated them).
  assert.equal(authorizationToken(['Bearer a', 'Bearer a']), 'malformed')
  const twice = { ...httpRequest('Bearer a'), raw: { rawHeaders: ['authorization', 'a', 'Authorization', 'a'] } }
  assert.deepEqual(presentedToken(twice as unknown as FastifyRequest), { token: undefined, malformed: true })
})
