import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { ANTLER_BIN, envWithoutFlags, spawnAntler } from '../_helpers/cli.ts'
import { tempDir } from '../_helpers/devchain.ts'

/**
 * Runs `antler …` to its end (at most 45 s: a refusal must not wait for anything, but a loaded machine loads slowly)
 * and checks it was refused with one plain line naming `names`.
 */
function assertRefused(args: string[], env: Record<string, string>, names: RegExp): string {
  const started = Date.now()
  const result = spawnSync(process.execPath, [ANTLER_BIN, ...args], {
    encoding: 'utf8',
    env: envWithoutFlags(env),
    timeout: 45_000,
  })
  const what = `${Object.entries(env)
    .map(([k, v]) => `${k}=${v} `)
    .join('')}antler ${args.join(' ')}`
  assert.equal(result.signal, null, `${what}: still running after 45 s`)
  assert.ok(Date.now() - started < 30_000, `${what}: took ${Date.now() - started} ms`)
  assert.notEqual(result.status, 0, `${what}: exit status`)
  assert.equal(result.stdout, '', `${what}: stdout`)
  const lines = result.stderr.split('\n').filter((l) => l !== '')
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${result.stderr}`)
  assert.match(lines[0], names, what)
  assert.doesNotMatch(result.stderr, /^\s+at /m, `${what}: no stack trace`)
  return lines[0]
}

// [command, flag, bad value]; each is tried as a flag and as its ANTLER_* variable.
const BAD: [string, string, string][] = [
  ['devchain', '--chain-port', 'abc'],
  ['devchain', '--ship-port', '70000'],
  ['devchain', '--host', ''],
  ['devchain', '--fork-rate', '2'],
  ['devchain', '--workload', 'heavy'],
  ['devchain', '--log-level', 'loud'],
  ['dev', '--block-time', 'soon'],
  ['dev', '--lib-depth', '0'],
  ['dev', '--producers', '22'],
  ['dev', '--store', 'mysql://x'],
  ['dev', '--data-dir', ''],
  ['index', '--start-block', 'abc'],
  ['index', '--start-block', '0'],
  ['index', '--store', 'mysql://x'],
  ['index', '--ship', 'http://127.0.0.1:8080'],
  ['index', '--log-level', 'verbose'],
  ['verify', '--chain-api', 'ftp://x'],
  ['verify', '--samples', 'many'],
  ['verify', '--store', 'postgres://'],
]

test('a bad flag value is refused at start with one line naming the flag, no stack trace', (t) => {
  const dataDir = tempDir(t)
  for (const [command, flag, value] of BAD) {
    const line = assertRefused(
      [command, '--data-dir', dataDir, flag, value],
      {},
      new RegExp(
        `error: option '${flag} <[a-z]+>' argument '${value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}' is invalid\\. expected `,
      ),
    )
    assert.doesNotMatch(line, /from env/)
  }
})

test('a bad ANTLER_* value is refused at start with one line naming the variable and its flag, no stack trace', (t) => {
  const dataDir = tempDir(t)
  for (const [command, flag, value] of BAD) {
    const variable = `ANTLER_${flag.slice(2).replace(/-/g, '_').toUpperCase()}`
    const env = flag === '--data-dir' ? { [variable]: value } : { ANTLER_DATA_DIR: dataDir, [variable]: value }
    assertRefused(
      [command],
      env,
      new RegExp(`error: option '${flag} <[a-z]+>' value '.*' from env '${variable}' is invalid\\. expected `),
    )
  }
})

test('the refusals say what is expected; index needs --ship; a flag wins over its variable; a variable of another command is ignored', (t) => {
  const dataDir = tempDir(t)
  assert.match(
    assertRefused(['index', '--data-dir', dataDir, '--start-block', 'abc'], {}, /--start-block/),
    /expected a whole number from 1 to 4294967295$/,
  )
  assert.match(
    assertRefused(['index', '--data-dir', dataDir, '--store', 'mysql://x'], {}, /--store/),
    /expected sqlite or a postgres:\/\/ or postgresql:\/\/ URL$/,
  )
  assert.match(
    assertRefused(['devchain', '--data-dir', dataDir], { ANTLER_CHAIN_PORT: 'abc' }, /ANTLER_CHAIN_PORT/),
    /expected a whole number from 0 to 65535$/,
  )
  assert.match(
    assertRefused(['index', '--data-dir', dataDir], {}, /--ship/),
    /^antler: --ship is required \(or ANTLER_SHIP\)$/,
  )
  // The flag wins over its variable, whichever of the two is bad.
  assertRefused(['index', '--data-dir', dataDir, '--start-block', 'x'], { ANTLER_START_BLOCK: '5' }, /argument 'x'/)
  assertRefused(
    ['verify', '--data-dir', dataDir, '--samples', '5'],
    { ANTLER_SAMPLES: 'many' },
    /^antler: no store at /,
  )
  // verify has no --chain-port: ANTLER_CHAIN_PORT (set for a devchain in the same shell) is not its business.
  assert.match(
    assertRefused(['verify', '--data-dir', dataDir], { ANTLER_CHAIN_PORT: 'abc' }, /^antler: no store at /),
    /store\.sqlite$/,
  )
})

test('good ANTLER_* values are taken: devchain on ANTLER_CHAIN_PORT=0 prints a ready line with real ports; at log level silent stderr stays empty', async (t) => {
  const dataDir = tempDir(t)
  const cli = await spawnAntler(
    t,
    ['devchain'],
    envWithoutFlags({
      ANTLER_DATA_DIR: dataDir,
      ANTLER_CHAIN_PORT: '0',
      ANTLER_SHIP_PORT: '0',
      ANTLER_BLOCK_TIME: '0',
      ANTLER_LOG_LEVEL: 'silent',
    }),
  )
  assert.match(cli.ready.chainApi, /^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/)
  assert.match(cli.ready.ship, /^ws:\/\/127\.0\.0\.1:[1-9][0-9]*$/)
  const info = (await (await fetch(`${cli.ready.chainApi}/v1/chain/get_info`)).json()) as { chain_id: string }
  assert.equal(info.chain_id, cli.ready.chainId)
  cli.child.kill('SIGTERM')
  assert.equal(await cli.exited, 0)
  assert.equal(cli.stdout(), `antler ready ${JSON.stringify(cli.ready)}\n`)
  assert.equal(cli.stderr(), '')
})
