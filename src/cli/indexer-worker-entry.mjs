// Worker bootstrap: the worker thread has no TypeScript loader of its own, so it registers tsx
// (as bin/antler.js does for the main thread) before loading the worker's module.
const { register } = await import('tsx/esm/api')
register()
await import('./indexer-worker.ts')
