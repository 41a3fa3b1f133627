import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { ANTLER_BIN, spawnAntler } from '../_helpers/cli.ts'
import { tempDir } from '../_helpers/devchain.ts'

test('antler devchain prints one ready line with real ports, serves, and exits 0 on SIGTERM', async (t) => {
  const dataDir = tempDir(t)
  const cli = await spawnAntler(t, [
    'devchain',
    '--data-dir',
    dataDir,
    '--chain-port',
    '0',
    '--ship-port',
    '0',
    '--block-time',
    '100',
  ])
  assert.deepEqual(Object.keys(cli.ready).sort(), ['chainApi', 'chainId', 'ship'])
  assert.match(cli.ready.chainApi, /^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/)
  assert.match(cli.ready.ship, /^ws:\/\/127\.0\.0\.1:[1-9][0-9]*$/)
  assert.match(cli.ready.chainId, /^[0-9a-f]{64}$/)
  const info = (await (await fetch(`${cli.ready.chainApi}/v1/chain/get_info`)).json()) as {
    chain_id: string
    head_block_num: number
  }
  assert.equal(info.chain_id, cli.ready.chainId)
  await new Promise((r) => setTimeout(r, 400))
  const later = (await (await fetch(`${cli.ready.chainApi}/v1/chain/get_info`)).json()) as { head_block_num: number }
  assert.ok(later.head_block_num > info.head_block_num, 'blocks are produced every --block-time')
  cli.child.kill('SIGTERM')
  assert.equal(await cli.exited, 0)

  // Same data dir: same chain, continuing.
  const again = await spawnAntler(
    t,
    ['devchain', '--data-dir', dataDir, '--chain-port', '0', '--ship-port', '0', '--block-time', '0'],
    {},
  )
  assert.equal(again.ready.chainId, cli.ready.chainId)
  const resumed = (await (await fetch(`${again.ready.chainApi}/v1/chain/get_info`)).json()) as {
    head_block_num: number
  }
  assert.ok(resumed.head_block_num >= later.head_block_num)
  again.child.kill('SIGINT')
  assert.equal(await again.exited, 0)
})

test('antler devchain reads flags from ANTLER_* variables and refuses bad flags', async (t) => {
  const dataDir = tempDir(t)
  const cli = await spawnAntler(t, ['devchain'], {
    ANTLER_DATA_DIR: dataDir,
    ANTLER_CHAIN_PORT: '0',
    ANTLER_SHIP_PORT: '0',
    ANTLER_BLOCK_TIME: '0',
  })
  assert.ok(cli.ready.chainApi)
  cli.child.kill('SIGTERM')
  assert.equal(await cli.exited, 0)
  for (const args of [
    ['--block-time', 'soon'],
    ['--fork-rate', '2'],
    ['--workload', 'heavy'],
    ['--chain-port', '70000'],
  ]) {
    const result = spawnSync(process.execPath, [ANTLER_BIN, 'devchain', '--data-dir', dataDir, ...args], {
      encoding: 'utf8',
    })
    assert.notEqual(result.status, 0, args.join(' '))
    assert.match(result.stderr, /error: option/, args.join(' '))
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace')
  }
})
