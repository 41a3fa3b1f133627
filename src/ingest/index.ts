export { normalizeBlock } from './normalize.ts'
export { createIndexer, type Indexer, type IndexerConfig } from './indexer.ts'
