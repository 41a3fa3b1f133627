import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import type { AntlerError } from '../../src/antelope/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import type { ShipReaderEvent } from '../../src/ship/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { startShipProxy } from '../_helpers/ship-proxy.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

interface AbiJson {
  structs: { name: string; fields: { name: string; type: string }[] }[]
  variants: { name: string; types: string[] }[]
}

/** The devchain's ABI text with one more alternative in `variantName`, a copy of `copyOf` plus a field. */
const withVariant = (variantName: string, alternative: string, copyOf: string) => (text: string) => {
  const abi = JSON.parse(text) as AbiJson
  abi.variants.find((v) => v.name === variantName)!.types.push(alternative)
  abi.structs.push({
    name: alternative,
    fields: [...abi.structs.find((s) => s.name === copyOf)!.fields, { name: 'added', type: 'uint32' }],
  })
  return JSON.stringify(abi)
}

test('a node whose SHiP ABI has action_trace_v2 is refused at connect with ship_protocol_error naming it: no block requested, nothing written', async (t) => {
  const devchain = await withDevchain(t)
  for (let i = 0; i < 10; i++) devchain.chain.produceBlock()
  const proxy = await startShipProxy(t, devchain.ship, {
    abi: withVariant('action_trace', 'action_trace_v2', 'action_trace_v1'),
  })
  const store = openSqliteStore(join(tempDir(t), 'store.sqlite'))
  onCleanup(t, () => store.close())
  const events: ShipReaderEvent[] = []
  const indexer = createIndexer({
    shipUrl: proxy.url,
    store,
    reconnect: { minDelayMs: 50 },
    onReaderEvent: (e) => events.push(e),
  })
  // Without the guard it would follow the chain forever: stopped after 10 s.
  const timer = setTimeout(() => void indexer.stop(), 10_000)
  const error = await indexer.run().then(
    () => undefined,
    (e: unknown) => e as AntlerError,
  )
  clearTimeout(timer)
  assert.equal(error?.code, 'ship_protocol_error', error?.message)
  assert.deepEqual(error.details, { types: ['action_trace_v2'] })
  assert.match(error.message, /action_trace_v2: unknown variant: alternative 2 of action_trace/)
  assert.deepEqual(proxy.requests, [], 'no blocks request was sent')
  assert.equal(proxy.sessions(), 1)
  assert.equal(events.filter((e) => e.type === 'reconnecting').length, 0)
  assert.equal(await store.position(), undefined)
  assert.equal(await store.blockByNum(1), undefined)
})

test('a node whose ABI adds chain_config_v2 (Spring 2.0-dev global_property) is indexed as usual: no decoder reads those rows', async (t) => {
  const devchain = await withDevchain(t)
  for (let i = 0; i < 10; i++) devchain.chain.produceBlock()
  const proxy = await startShipProxy(t, devchain.ship, {
    abi: withVariant('chain_config', 'chain_config_v2', 'chain_config_v1'),
  })
  const store = openSqliteStore(join(tempDir(t), 'store.sqlite'))
  onCleanup(t, () => store.close())
  await createIndexer({ shipUrl: proxy.url, store, endBlockNum: devchain.chain.head.num }).run()
  assert.equal((await store.position())?.head.blockId, devchain.chain.head.id)
})
