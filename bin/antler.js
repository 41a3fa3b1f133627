#!/usr/bin/env node
// Runs the compiled code in dist/ (built by `npm install` through `prepare`, or `npm run build`); the
// TypeScript sources run through tsx instead when ANTLER_FROM_SOURCE=1 (the tests and benchmarks set
// it), and, with a note on stderr, when dist/ is missing or older than a file under src/.

const MIN_NODE_MAJOR = 22

// Antler needs Node 22 or later (better-sqlite3 13 is built for it). `npm start`, `npm test` and
// `npx antler` run the Node the project pins (the npm `node` package, first on their PATH); a bare
// `node bin/antler.js` under an older Node stops here with one line.
if (Number(process.versions.node.split('.')[0]) < MIN_NODE_MAJOR) {
  process.stderr.write(
    `antler needs Node.js ${MIN_NODE_MAJOR} or later (this is ${process.versions.node}); run it through npm (npm start, npx antler) to use the pinned one\n`,
  )
  process.exit(2)
}

// A signal that arrives while the CLI is still loading stops it cleanly (exit 0); once a command
// registers its own shutdown (src/cli/process.ts), that handler takes over. Installed before
// anything is imported, since loading takes a moment.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (process.listenerCount(signal) === 1) process.exit(0)
  })
}

const fromSource = process.env.ANTLER_FROM_SOURCE === '1'
const stale = fromSource ? undefined : (await import('./build-state.js')).staleBuild()
if (stale) process.stderr.write(`antler: ${stale}; running the sources through tsx (npm run build compiles them)\n`)
if (fromSource || stale) {
  const { register } = await import('tsx/esm/api')
  register()
  await import('../src/cli/main.ts')
} else {
  await import('../dist/cli/main.js')
}
