// Worker bootstrap when the sources run through tsx (ANTLER_FROM_SOURCE=1, the tests): the worker thread has no
// TypeScript loader of its own, so it registers tsx (as bin/antler.js does for the main thread) before loading the
// worker's module. The compiled code (dist/) starts indexer-worker.js directly; the build does not copy this file.
const { register } = await import('tsx/esm/api')
register()
await import('./indexer-worker.ts')
