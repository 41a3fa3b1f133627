#!/usr/bin/env node
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
