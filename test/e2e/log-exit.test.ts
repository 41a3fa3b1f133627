import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const LOGGER = fileURLToPath(new URL('../../src/cli/logger.ts', import.meta.url))

test('the asynchronous log loses nothing at exit: 2,000 lines logged, then process.exit at once, all on stderr', () => {
  // The process's own logger (stderr), as the CLI builds it; the exit follows the last line in the same tick.
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOGGER)})
    const log = createLogger()
    for (let i = 0; i < 2000; i++) log.info({ i, pad: 'x'.repeat(200) }, 'request')
    log.fatal('shutdown failed')
    process.exit(3)
  `
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.equal(child.status, 3, child.stderr.slice(-2000))
  const lines = child.stderr.trim().split('\n')
  assert.equal(lines.length, 2001)
  assert.equal(JSON.parse(lines[1999]).i, 1999)
  assert.equal(JSON.parse(lines[2000]).msg, 'shutdown failed')
})
