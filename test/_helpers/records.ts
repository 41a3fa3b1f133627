import type { ActionRecord, BlockRecord, TransactionRecord } from '../../src/store/index.ts'

/** The transaction id the record builders use unless told otherwise. */
export const RECORD_TRX_ID = 'a'.repeat(64)

/** A stored block (id from its number, one transaction, one action), with `fields` over the defaults. */
export function blockRecord(fields: Partial<BlockRecord> & Pick<BlockRecord, 'num'>): BlockRecord {
  return {
    id: fields.num.toString(16).padStart(8, '0') + 'c'.repeat(56),
    previous: '0'.repeat(64),
    timestampMs: Date.UTC(2030, 0, 1),
    producer: 'eosio',
    transactionCount: 1,
    actionCount: 1,
    ...fields,
  }
}

/** A stored transaction record (executed, at index 0 of block 7), with `fields` over the defaults. */
export function transactionRecord(fields: Partial<TransactionRecord> = {}): TransactionRecord {
  return {
    id: RECORD_TRX_ID,
    blockNum: 7,
    blockIndex: 0,
    status: 0,
    cpuUsageUs: 100,
    netUsageWords: 10,
    scheduled: false,
    ...fields,
  }
}

/** A stored action (`rawdb::put` by rawdb@active, the first of its transaction), with `fields` over the defaults. */
export function actionRecord(fields: Partial<ActionRecord> = {}): ActionRecord {
  return {
    globalSequence: 1,
    blockNum: 7,
    trxId: RECORD_TRX_ID,
    actionOrdinal: 1,
    creatorActionOrdinal: 0,
    receiver: 'rawdb',
    account: 'rawdb',
    name: 'put',
    authorization: [{ actor: 'rawdb', permission: 'active' }],
    data: new Uint8Array([1]),
    returnValue: new Uint8Array(0),
    actDigest: '0'.repeat(64),
    recvSequence: 1n,
    ramDeltas: [],
    ...fields,
  }
}
