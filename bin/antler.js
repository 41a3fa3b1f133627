#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx so no build step is needed after `npm install`.
import { register } from 'tsx/esm/api'

// A signal that arrives while the CLI is still loading stops it cleanly (exit 0); once a command
// registers its own shutdown (src/cli/process.ts), that handler takes over.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (process.listenerCount(signal) === 1) process.exit(0)
  })
}

register()
await import('../src/cli/main.ts')
