import { join } from 'node:path'
import { openSqliteStore } from '../../src/store/index.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { runStoreContract } from './contract/store-contract.ts'
import { runSearchContract } from './contract/search-contract.ts'

runStoreContract('sqlite', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  return { open: async () => openSqliteStore(path) }
})

runSearchContract('sqlite', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  return { open: async () => openSqliteStore(path) }
})
