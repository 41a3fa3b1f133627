import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { ANTLER_BIN } from '../_helpers/cli.ts'

/** Runs `antler --help` with `process.versions.node` replaced before bin/antler.js reads it. */
function helpUnder(nodeVersion: string) {
  const fakeVersion = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${nodeVersion}' } })`
  const preload = `data:text/javascript,${encodeURIComponent(fakeVersion)}`
  return spawnSync(process.execPath, ['--import', preload, ANTLER_BIN, '--help'], { encoding: 'utf8', timeout: 60_000 })
}

test('bin/antler.js under a Node older than 22 says so in one line on stderr and exits 2', () => {
  for (const version of ['20.19.0', '21.7.3']) {
    const run = helpUnder(version)
    assert.equal(run.status, 2, `Node ${version}: ${run.stderr}`)
    assert.equal(run.stdout, '')
    assert.match(
      run.stderr,
      new RegExp(`^antler needs Node\\.js 22 or later \\(this is ${version.replaceAll('.', '\\.')}\\)`),
    )
    assert.equal(run.stderr.trimEnd().split('\n').length, 1)
  }
})

test('bin/antler.js runs on Node 22 and later', () => {
  for (const version of ['22.0.0', process.versions.node]) {
    const run = helpUnder(version)
    assert.equal(run.status, 0, `Node ${version}: ${run.stderr}`)
    assert.match(run.stdout, /^Usage: antler/)
  }
})
