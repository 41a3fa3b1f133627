import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from './source-tree.ts'

/**
 * Compiles this tree's sources (scripts/build.js) into `dir`/dist and lays an installed copy out around it: bin/,
 * package.json and node_modules (a link to this tree's), but no src/, so its bin/antler.js runs dist/ alone as an
 * install does, and the tree's own dist/ is left as it is. Returns the copy's bin/antler.js.
 */
export function buildInstalledCopy(dir: string): string {
  const build = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/build.js'), '--out', join(dir, 'dist')], {
    encoding: 'utf8',
    timeout: 300_000,
  })
  if (build.status !== 0)
    throw new Error(`build failed (${build.status ?? build.signal}): ${build.stdout}${build.stderr}`)
  mkdirSync(join(dir, 'bin'))
  for (const file of ['antler.js', 'build-state.js']) copyFileSync(join(REPO_ROOT, 'bin', file), join(dir, 'bin', file))
  copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'))
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'))
  return join(dir, 'bin/antler.js')
}
