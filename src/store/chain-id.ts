import { GET_META } from './common-sql.ts'
import type { StoreWriter } from './port.ts'
import { awaited, rowsOf, type SqlSession } from './sql-routine.ts'

/** Insert-if-absent: the first chain id recorded stays (parameter: chain id). */
const RECORD_CHAIN_ID = "INSERT INTO meta VALUES ('chain_id', ?) ON CONFLICT (key) DO NOTHING"

/**
 * The chain id a store's blocks belong to, a meta row both adapters read and write with the same statements: the
 * indexer records its node's before it writes a block and refuses a node of another chain.
 */
export function createChainIdRecord(on: SqlSession): Pick<StoreWriter, 'chainId' | 'recordChainId'> {
  const recorded = rowsOf<{ value: string }>(GET_META, ['chain_id'])
  return {
    chainId: async () => (await on.run(recorded))[0]?.value,
    recordChainId: (id) =>
      on.run(function* (sql) {
        yield* awaited(sql.run(RECORD_CHAIN_ID, [id]))
        return (yield* recorded(sql))[0].value
      }),
  }
}
