import { Type, type TProperties, type TObject } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Store } from '../../store/index.ts'
import { hyperionTime } from '../../hyperion/index.ts'

/**
 * What Hyperion adds to every answer (`timedQuery`): the time the query took, whether it came from a cache, and the
 * last indexed block with its time. Antler caches no answer, so `cached` is false; the last indexed block is the
 * store's head when the answer was made.
 */
// Optional in the schema only because handlers do not set them: the hook adds both to every object answer.
export const ENVELOPE_PROPERTIES = {
  query_time_ms: Type.Optional(Type.Number()),
  cached: Type.Optional(Type.Boolean()),
  lib: Type.Optional(Type.Number()),
  last_indexed_block: Type.Optional(Type.Number()),
  last_indexed_block_time: Type.Optional(Type.String()),
  total: Type.Optional(Type.Object({ value: Type.Number(), relation: Type.String() })),
}

/** A 200 schema with the envelope's fields besides the route's own. */
export function withEnvelope<T extends TProperties>(properties: T, options: { additionalProperties?: boolean } = {}) {
  return Type.Object({ ...ENVELOPE_PROPERTIES, ...properties }, options) as TObject<T & typeof ENVELOPE_PROPERTIES>
}

/** Route config: `envelope: false` leaves the answer as built (bodies that are not objects, v1's fixed shapes). */
declare module 'fastify' {
  interface FastifyContextConfig {
    envelope?: boolean
  }
}

/**
 * Adds the envelope to every object answer of the scope (not to errors, which have Hyperion's error shape): the store's
 * head and LIB as the answer is sent (a route that answers its own `lib`, as get_actions does, keeps it). The head's
 * block time is read once per head, not once per request.
 */
export function addEnvelope(app: FastifyInstance, store: Pick<Store, 'position' | 'blockByNum'>): void {
  let head: { num: number; time: string } | undefined
  const lastIndexed = async (): Promise<{ num: number; time: string; lib: number } | undefined> => {
    const position = await store.position()
    if (!position) return undefined
    if (head?.num !== position.head.blockNum) {
      const block = await store.blockByNum(position.head.blockNum)
      head = { num: position.head.blockNum, time: block ? hyperionTime(block.timestampMs) : '' }
    }
    return { ...head, lib: position.lib }
  }
  app.addHook('preSerialization', async (request, reply, payload) => {
    if (request.routeOptions.config.envelope === false || reply.statusCode >= 400) return payload
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || Buffer.isBuffer(payload))
      return payload
    const indexed = await lastIndexed()
    return {
      query_time_ms: Math.round(reply.elapsedTime * 1000) / 1000,
      cached: false,
      ...(indexed ? { lib: indexed.lib } : {}),
      ...payload,
      ...(indexed ? { last_indexed_block: indexed.num, last_indexed_block_time: indexed.time } : {}),
    }
  })
}
