import assert from 'node:assert/strict'
import type { BlockBatch, Store } from '../../../src/store/index.ts'
import { emptyBlock } from './keys-contract.ts'

/**
 * A block whose records carry every schema-5 detail: the header, a transaction's trace details
 * (header, signatures, an unreceipted action, a deferred creation) and an action's trace.
 */
export function detailedBlock(num: number, firstSeq: number): BlockBatch {
  const base = emptyBlock(num)
  const trxId = 'd'.repeat(63) + (num % 10).toString()
  return {
    ...base,
    block: {
      ...base.block,
      transactionCount: 1,
      actionCount: 1,
      header: {
        confirmed: 3,
        transactionMroot: '1'.repeat(64),
        actionMroot: '2'.repeat(64),
        scheduleVersion: 7,
        newProducers: {
          version: 8,
          producers: [
            { producerName: 'producera', blockSigningKey: 'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63' },
          ],
        },
        headerExtensions: [{ type: 1, data: 'abcd' }],
      },
    },
    transactions: [
      {
        id: trxId,
        blockNum: num,
        blockIndex: 0,
        status: 0,
        cpuUsageUs: 120,
        netUsageWords: 16,
        scheduled: false,
        details: {
          elapsedUs: 345,
          netUsage: 128,
          except: undefined,
          header: {
            expiration: 1_900_000_000,
            refBlockNum: 5,
            refBlockPrefix: 99,
            maxNetUsageWords: 0,
            maxCpuUsageMs: 0,
            delaySec: 0,
            transactionExtensions: [],
            signatures: ['00' + '11'.repeat(65)],
            contextFreeData: ['beef'],
          },
          unreceipted: [
            {
              actionOrdinal: 2,
              creatorActionOrdinal: 1,
              receiver: 'bob',
              account: 'bob',
              name: 'fail',
              authorization: [],
              data: '',
              trace: {
                elapsedUs: 1,
                console: 'x',
                contextFree: false,
                except: 'boom',
                authSequence: [],
                codeSequence: 0,
                abiSequence: 0,
              },
            },
          ],
          failedDtrx: undefined,
          deferred: {
            sender: '',
            senderId: '0',
            payer: 'alice',
            packedTrx: 'aa',
            createdBy: { trxId, actionOrdinal: 0 },
          },
        },
      },
    ],
    actions: [
      {
        globalSequence: firstSeq,
        blockNum: num,
        trxId,
        actionOrdinal: 1,
        creatorActionOrdinal: 0,
        receiver: 'alice',
        account: 'alice',
        name: 'hi',
        authorization: [{ actor: 'alice', permission: 'active' }],
        data: new Uint8Array([1, 2]),
        returnValue: new Uint8Array(0),
        actDigest: 'e'.repeat(64),
        recvSequence: 4n,
        ramDeltas: [],
        trace: {
          elapsedUs: 17,
          console: 'héllo\n',
          contextFree: false,
          except: undefined,
          authSequence: [['alice', '12']],
          codeSequence: 1,
          abiSequence: 2,
        },
      },
    ],
  }
}

/** The store answers `batch`'s details exactly as written (JSON-equal: undefined fields are not kept). */
export async function assertDetailsReadBack(store: Store, batch: BlockBatch): Promise<void> {
  const plain = (value: unknown) =>
    JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as unknown
  assert.deepEqual(plain((await store.blockByNum(batch.block.num))?.header), plain(batch.block.header))
  const trx = batch.transactions[0]
  assert.deepEqual(plain((await store.transaction(trx.id))?.details), plain(trx.details))
  assert.deepEqual(plain((await store.transactionHistory(trx.id)).records.map((r) => r.details)), plain([trx.details]))
  assert.deepEqual(
    plain((await store.actionsOfTransaction(trx.id)).map((a) => a.trace)),
    plain(batch.actions.map((a) => a.trace)),
  )
  assert.deepEqual(
    plain((await store.actionsBySeq([Number(batch.actions[0].globalSequence)])).map((a) => a.trace)),
    plain(batch.actions.map((a) => a.trace)),
  )
}
