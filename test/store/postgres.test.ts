import { openPostgresStore } from '../../src/store/index.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { runStoreContract } from './contract/store-contract.ts'

runStoreContract(
  'postgres',
  async (t) => {
    const url = await withPostgresDatabase(t)
    return { open: () => openPostgresStore(url) }
  },
  PG_SKIP_REASON,
)
