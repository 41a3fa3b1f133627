import type { TestContext } from 'node:test'
import { openPostgresStore } from '../../src/store/index.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { runSearchContract } from './contract/search-contract.ts'
import { runStoreContract } from './contract/store-contract.ts'

const postgres = async (t: TestContext) => {
  const url = await withPostgresDatabase(t)
  return { open: () => openPostgresStore(url) }
}

runStoreContract('postgres', postgres, PG_SKIP_REASON)
runSearchContract('postgres', postgres, PG_SKIP_REASON)
