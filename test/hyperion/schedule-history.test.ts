import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { PrivateKey, PublicKey, Serializer } from '@wharfkit/antelope'
import { BinaryWriter, nameToBigInt, toHex } from '../../src/antelope/index.ts'
import { announcedSchedule, decodeAuthoritySchedule } from '../../src/hyperion/block-documents.ts'
import { hyperionSchedule } from '../../src/hyperion/schedule-history.ts'
import type { BlockBatch, BlockHeaderDetails, Store } from '../../src/store/index.ts'
import { tempSqliteFile } from '../_helpers/store.ts'

const KEY_A = String(PrivateKey.generate('K1').toPublic())
const KEY_B = String(PrivateKey.generate('K1').toPublic())
const id = (num: number) => num.toString(16).padStart(8, '0') + 'b'.repeat(56)

/** A `producer_authority_schedule` as the schedule-change header extension carries it. */
function authoritySchedule(version: number, producers: [string, string][]): string {
  const w = new BinaryWriter().uint32(version).varuint32(producers.length)
  for (const [name, key] of producers) {
    w.uint64(nameToBigInt(name)).varuint32(0).uint32(1).varuint32(1)
    w.raw(Serializer.encode({ object: PublicKey.from(key) }).array).uint16(1)
  }
  return toHex(w.finish())
}

function block(num: number, header: Partial<BlockHeaderDetails>): BlockBatch {
  return {
    block: {
      num,
      id: id(num),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1),
      timestampMs: Date.UTC(2024, 0, 1) + num * 500,
      producer: 'prod.a',
      transactionCount: 0,
      actionCount: 0,
      header: {
        confirmed: 0,
        transactionMroot: '',
        actionMroot: '',
        scheduleVersion: 0,
        newProducers: null,
        headerExtensions: [],
        ...header,
      },
    },
    transactions: [],
    actions: [],
    rows: [],
    abis: [],
    permissions: [],
    links: [],
  }
}

/**
 * Version 1 announced (legacy new_producers) at block 3, active from 6; version 2 announced (extension) at 8, active
 * from 11; version 3 announced at 13, above LIB 12, not active at head 14.
 */
async function scheduleStore(t: TestContext): Promise<Store> {
  const store = tempSqliteFile(t)()
  const v1 = { version: 1, producers: [{ producerName: 'prod.a', blockSigningKey: KEY_A }] }
  const v2 = authoritySchedule(2, [
    ['prod.a', KEY_A],
    ['prod.b', KEY_B],
  ])
  const v3 = authoritySchedule(3, [['prod.b', KEY_B]])
  for (let num = 1; num <= 14; num++) {
    const scheduleVersion = num >= 11 ? 2 : num >= 6 ? 1 : 0
    const header: Partial<BlockHeaderDetails> = { scheduleVersion }
    if (num === 3) Object.assign(header, { newProducers: v1 })
    if (num === 8) Object.assign(header, { headerExtensions: [{ type: 1, data: v2 }] })
    if (num === 13) Object.assign(header, { headerExtensions: [{ type: 1, data: v3 }] })
    await store.applyBlock(block(num, header), Math.min(num, 12))
  }
  return store
}

test('the schedule-change extension decodes to producers with their first key', () => {
  const schedule = decodeAuthoritySchedule(
    Buffer.from(
      authoritySchedule(7, [
        ['prod.a', KEY_A],
        ['prod.b', KEY_B],
      ]),
      'hex',
    ),
  )
  assert.deepEqual(schedule, {
    version: 7,
    producers: [
      { producer_name: 'prod.a', block_signing_key: KEY_A },
      { producer_name: 'prod.b', block_signing_key: KEY_B },
    ],
  })
  assert.equal(announcedSchedule(block(1, {}).block), undefined)
  assert.equal(announcedSchedule(block(1, { headerExtensions: [{ type: 1, data: '00' }] }).block), undefined)
})

test('get_schedule: proposed and activated schedules found through the headers', async (t) => {
  const store = await scheduleStore(t)
  const time = (num: number) => new Date(Date.UTC(2024, 0, 1) + num * 500).toISOString().slice(0, -1)
  const legacy = (key: string) => PublicKey.from(key).toLegacyString()

  // Default (proposed): the newest announcement, here the pending version 3.
  assert.deepEqual(await hyperionSchedule(store, {}), {
    timestamp: time(13),
    proposed_block_num: 13,
    version: 3,
    producers: [{ producer_name: 'prod.b', block_signing_key: KEY_B, legacy_key: legacy(KEY_B) }],
  })
  // Activated: the active version 2, from its first block.
  const active = await hyperionSchedule(store, { mode: 'activated' })
  assert.deepEqual([active.block_num, active.version, active.timestamp], [11, 2, time(11)])
  assert.deepEqual(
    active.producers.map((p) => p.producer_name),
    ['prod.a', 'prod.b'],
  )
  const v1 = await hyperionSchedule(store, { version: 1 })
  assert.deepEqual([v1.proposed_block_num, v1.version, v1.producers[0]?.block_signing_key], [3, 1, KEY_A])
  assert.equal((await hyperionSchedule(store, { version: 1, mode: 'activated' })).block_num, 6)
  // producer / key: the newest schedule listing them.
  assert.equal((await hyperionSchedule(store, { producer: 'prod.a' })).version, 2)
  assert.equal((await hyperionSchedule(store, { key: legacy(KEY_A), mode: 'activated' })).version, 2)
  assert.equal((await hyperionSchedule(store, { producer: 'prod.b', mode: 'activated' })).version, 2)
  await assert.rejects(hyperionSchedule(store, { version: 3, mode: 'activated' }), /schedule not found/)
  await assert.rejects(hyperionSchedule(store, { version: 9 }), /schedule not found/)
  await assert.rejects(hyperionSchedule(store, { producer: 'nobody' }), /schedule not found/)
})
