import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { StoreFactory } from './store-contract.ts'

const CHAIN_A = 'a1'.repeat(32)
const CHAIN_B = 'b2'.repeat(32)

/** The chain id record (chain-id.ts): absent until recorded, the first recorded stays, kept across reopens. */
export function runChainIdContract(name: string, factory: StoreFactory, skip: string | false = false): void {
  test(`${name}: a store records one chain id, the first, and keeps it across reopens`, { skip }, async (t) => {
    const backing = await factory(t)
    const store = await backing.open()
    try {
      assert.equal(await store.chainId(), undefined, 'a new store has no chain id')
      assert.equal(await store.recordChainId(CHAIN_A), CHAIN_A)
      assert.equal(await store.recordChainId(CHAIN_B), CHAIN_A, 'a second record answers the first one')
      assert.equal(await store.chainId(), CHAIN_A)
    } finally {
      await store.close()
    }
    const reopened = await backing.open()
    try {
      assert.equal(await reopened.chainId(), CHAIN_A)
    } finally {
      await reopened.close()
    }
  })
}
