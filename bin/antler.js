#!/usr/bin/env -S node --max-semi-space-size=64
// A 64 MB young generation: ingest allocates a block's records and keeps a batch of them alive
// until it is written; with the default 16 MB, scavenges copied them over and over (catch-up: -13%
// CPU per block, docs/PERFORMANCE.md).
// Runs the TypeScript sources directly through tsx so no build step is needed after `npm install`.

// A signal that arrives while the CLI is still loading stops it cleanly (exit 0); once a command
// registers its own shutdown (src/cli/process.ts), that handler takes over. Installed before
// anything is imported, since loading takes a moment.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (process.listenerCount(signal) === 1) process.exit(0)
  })
}

const { register } = await import('tsx/esm/api')
register()
await import('../src/cli/main.ts')
