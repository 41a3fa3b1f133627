import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** An older commit checked out beside this tree, ready to run its own code. */
export interface AgainstTree {
  /** The worktree's root. */
  readonly root: string
  /** The full commit id `rev` names. */
  readonly commit: string
  /** `shared`: its node_modules is a link to this tree's; `installed`: `npm ci` ran in it. */
  readonly deps: 'shared' | 'installed'
  /** Installed packages replaced by this tree's copy (a native addon its npm ci could not build for this Node). */
  readonly borrowed: readonly string[]
  /** Removes the worktree if this run made it (the smoke's: one a commit would pile up in the temporary directory). */
  remove(): void
}

const thisRoot = new URL('..', import.meta.url).pathname.replace(/\/$/, '')
const git = (args: string[], cwd = thisRoot) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()

type LockPackages = Record<string, { version?: string }>
const lockPackages = (text: string): LockPackages => (JSON.parse(text) as { packages?: LockPackages }).packages ?? {}

/**
 * The packages of `theirs` (a lockfile's `packages`) that `ours` does not hold at the same place and version; none
 * means a link to our node_modules gives the older commit exactly what its lockfile installs.
 */
function missingPackages(theirs: LockPackages, ours: LockPackages): string[] {
  return Object.entries(theirs)
    .filter(([path, p]) => path !== '' && ours[path]?.version !== p.version)
    .map(([path, p]) => `${path.replace(/^node_modules\//, '')}@${p.version}`)
}

/**
 * A git worktree of `rev` under the temporary directory (`antler-against-<12 hex>`), made once and reused. Its
 * dependencies: a symlink to this tree's node_modules when every package of its lockfile is installed here at the same
 * version, else its own `npm ci` (once; a marker holds the lockfile's hash). `log` says what is being done.
 */
export function prepareAgainstTree(rev: string, log: (line: string) => void): AgainstTree {
  const commit = git(['rev-parse', '--verify', `${rev}^{commit}`])
  const root = join(tmpdir(), `antler-against-${commit.slice(0, 12)}`)
  const created = !existsSync(root)
  const remove = () => void (created && git(['worktree', 'remove', '--force', root]))
  if (!existsSync(root)) {
    log(`against: git worktree add ${root} (${commit.slice(0, 12)})`)
    git(['worktree', 'add', '--detach', root, commit])
  } else if (git(['rev-parse', 'HEAD'], root) !== commit) {
    throw new Error(`against: ${root} exists but is not at ${commit}; remove it (git worktree remove --force ${root})`)
  }
  const lockText = readFileSync(join(root, 'package-lock.json'), 'utf8')
  const missing = missingPackages(
    lockPackages(lockText),
    lockPackages(readFileSync(join(thisRoot, 'package-lock.json'), 'utf8')),
  )
  const modules = join(root, 'node_modules')
  if (missing.length === 0) {
    if (!existsSync(modules)) symlinkSync(join(thisRoot, 'node_modules'), modules, 'dir')
    return { root, commit, deps: 'shared', borrowed: [], remove }
  }
  const marker = join(modules, '.antler-against-lock')
  const lockHash = createHash('sha256').update(lockText).digest('hex')
  if (!existsSync(marker) || readFileSync(marker, 'utf8') !== lockHash) {
    const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ` and ${missing.length - 5} more` : '')
    log(`against: ${commit.slice(0, 12)} locks packages this tree does not have (${shown}): npm ci in ${root}`)
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit', timeout: 30 * 60_000 })
    writeFileSync(marker, lockHash)
  }
  return { root, commit, deps: 'installed', borrowed: borrowNativeAddon(root, 'better-sqlite3', log), remove }
}

/**
 * The store's native addon as the older commit's npm ci left it, if it opens a database under this Node; else (npm ci
 * built it against the system Node's headers, and this Node's cannot be fetched here) this tree's copy is linked in its
 * place: the comparison then measures both commits' code on one SQLite driver. Returns what was borrowed.
 */
function borrowNativeAddon(root: string, name: string, log: (line: string) => void): string[] {
  const theirs = join(root, 'node_modules', name)
  const ours = join(thisRoot, 'node_modules', name)
  const version = (path: string) =>
    (JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { version: string }).version
  const lockVersion = (JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: LockPackages })
    .packages[`node_modules/${name}`]?.version
  const borrowed = [`${name} ${lockVersion} -> this tree's ${version(ours)}`]
  if (lstatSync(theirs).isSymbolicLink()) return borrowed
  const probe = `const D = require(${JSON.stringify(name)}); new D(':memory:').close()`
  try {
    execFileSync(process.execPath, ['-e', probe], { cwd: root, stdio: 'ignore' })
    return []
  } catch {
    log(`against: ${name} in ${root} does not load under Node ${process.version}: ${borrowed[0]}`)
    rmSync(theirs, { recursive: true, force: true })
    symlinkSync(ours, theirs, 'dir')
    return borrowed
  }
}

/** This tree's root (the side `--against` compares the older commit with). */
export const currentRoot = thisRoot
