import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildInstalledCopy } from '../_helpers/build.ts'
import { ANTLER_BIN, spawnAntler } from '../_helpers/cli.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { REPO_ROOT } from '../_helpers/source-tree.ts'

// The build (npm install / npm run build): a fresh compile of the current sources into a copy laid out as an install
// (no src/), never the tree's own dist/, which may be older than the sources.

/** A preload that writes the URL of every module the process resolved to the file LOADED_MODULES_FILE names. */
const RECORD_LOADED_MODULES = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module'
import { writeFileSync } from 'node:fs'
const urls = new Set()
registerHooks({ resolve: (specifier, context, next) => { const found = next(specifier, context); urls.add(found.url); return found } })
process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE, JSON.stringify([...urls])))
`)}`

/** The packages (node_modules) and the modules of dist/ among resolved URLs, sorted. */
function packagesAndDistModules(urls: string[]): { packages: string[]; dist: string[] } {
  const paths = urls.filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url))
  const packages = paths.flatMap((path) => path.match(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//)?.[1] ?? [])
  const dist = paths.flatMap((path) => path.match(/\/dist\/(.+)$/)?.[1] ?? [])
  return { packages: [...new Set(packages)].sort(), dist: [...new Set(dist)].sort() }
}

/** `node BIN ARGS`, to its end. */
function run(bin: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []) {
  return spawnSync(process.execPath, [...nodeArgs, bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  })
}

test('the compiled build runs alone: antler --help loads commander only, antler dev starts; a stale build is not run', async (t) => {
  const dir = tempDir(t, 'antler-build-')
  const bin = buildInstalledCopy(dir)
  const compiled = { ANTLER_FROM_SOURCE: '0' }

  await t.test('compiled antler --help prints what the sources print, loading no command module', () => {
    const fromSource = run(ANTLER_BIN, ['--help'], { ANTLER_FROM_SOURCE: '1' })
    assert.equal(fromSource.status, 0, fromSource.stderr)
    const loadedFile = join(dir, 'loaded.json')
    const started = performance.now()
    const help = run(bin, ['--help'], { ...compiled, LOADED_MODULES_FILE: loadedFile }, [
      '--import',
      RECORD_LOADED_MODULES,
    ])
    t.diagnostic(`compiled antler --help: ${Math.round(performance.now() - started)} ms wall (loaded machine: noisy)`)
    assert.equal(help.status, 0, help.stderr)
    assert.equal(help.stderr, '')
    assert.equal(help.stdout, fromSource.stdout)
    const loaded = packagesAndDistModules(JSON.parse(readFileSync(loadedFile, 'utf8')) as string[])
    assert.deepEqual(loaded, { packages: ['commander'], dist: ['cli/commands.js', 'cli/main.js'] })
  })

  await t.test(
    'compiled antler dev reaches its ready line (indexer worker included) and serves its pages',
    async () => {
      const dataDir = tempDir(t)
      const ports = ['--port', '0', '--grpc-port', '0', '--chain-port', '0', '--ship-port', '0']
      const cli = await spawnAntler(t, ['dev', '--data-dir', dataDir, ...ports, '--block-time', '100'], compiled, bin)
      assert.doesNotMatch(cli.stderr(), /running the sources/)
      assert.equal((await fetch(`${cli.ready.api}/healthz`)).status, 200)
      // The GraphiQL page script is a file the build copies (src/api/graphiql/).
      const page = await fetch(`${cli.ready.api}/graphiql/assets/page.js`)
      assert.equal(page.status, 200)
      assert.ok((await page.text()).length > 0)
      cli.child.kill('SIGTERM')
      assert.equal(await cli.exited, 0, cli.stderr())
    },
  )

  await t.test('bin/antler.js runs the sources, saying why, when dist/ is unfinished or older than src/', () => {
    const stamp = join(dir, 'dist', 'BUILD_STARTED_AT')
    const built = readFileSync(stamp, 'utf8')
    symlinkSync(join(REPO_ROOT, 'src'), join(dir, 'src'))
    try {
      writeFileSync(stamp, '0\n')
      const stale = run(bin, ['--help'], compiled)
      assert.equal(stale.status, 0, stale.stderr)
      assert.match(stale.stderr, /^antler: \S+\.ts changed since dist\/ was built; running the sources through tsx/)
      assert.match(stale.stdout, /^Usage: antler/)
      rmSync(stamp)
      assert.match(run(bin, ['--help'], compiled).stderr, /^antler: dist\/ is missing or was not fully built; running/)
      // A build that started after every source was saved is current (an hour ahead: a file saved meanwhile by
      // someone working in this tree does not count).
      writeFileSync(stamp, `${Date.now() + 3_600_000}\n`)
      assert.equal(run(bin, ['--help'], compiled).stderr, '')
    } finally {
      rmSync(join(dir, 'src'))
      writeFileSync(stamp, built)
    }
  })
})
