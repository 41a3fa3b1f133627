import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

/**
 * The repository stands alone: a clone holds everything its code, tests and docs read or point to. No text file may
 * name the notes folder that sat beside the repository during development (its design document, reference notes,
 * specification or recorded data) nor a relative path that climbs out of the repository root. Facts from those notes
 * are stated in docs/ (ARCHITECTURE.md, API.md, ERRORS.md, DEVCHAIN.md, OPERATIONS.md); recorded chain data lives in
 * test/fixtures/.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url))
/**
 * What is scanned: the code, the tests, the benchmarks, the CLI entry, the build script, the docs, CI and the README
 * (not dist/, which the build compiles from src/).
 */
const SCANNED = ['src', 'test', 'bench', 'bin', 'scripts', 'docs', '.ci', 'README.md']
/** Recorded data, kept byte for byte: not prose or code. */
const SKIPPED_PREFIX = 'test/fixtures/'

/** A named form of citation that only makes sense with the notes folder beside the repository. */
interface OutsidePattern {
  readonly name: string
  readonly regex: RegExp
}

// Written so that this file's own text does not match them.
const OUTSIDE_PATTERNS: readonly OutsidePattern[] = [
  // Built from pieces, as this file's own text must not match it.
  {
    name: 'the shared folder beside the repository',
    regex: new RegExp([String.raw`\.\.`, 'shared'].join(String.raw`\/`) + String.raw`(?![\w-])`),
  },
  { name: 'a file of the shared notes folder', regex: /\bshared\/(?:DESIGN\.md|reference|spec|fixtures|hooks)\b/ },
  { name: 'a section of the design document', regex: /\bDESIGN\s*§/ },
  { name: 'the design document', regex: /\bDESIGN\.md\b/ },
  { name: 'a reference note', regex: /\breference\/[\w-]+\.(?:md|json)\b/ },
  { name: 'the dfuse wire notes', regex: /\bdfuse-wire\b/ },
  { name: 'a specification file', regex: /\bspec\/[\w-]+\.md\b/ },
]

/** One or more `../` and what follows, not inside a longer path (`a/../b` is left alone). */
const CLIMBING_PATH = /(?<![\w./])((?:\.\.\/)+)([^\s'"`)\]>,;]*)/g

/** A line that leads outside the repository, with what it names there (`file` relative to the root). */
interface OutsideReference {
  readonly file: string
  readonly line: number
  readonly names: readonly string[]
}

/** What one line names outside the repository: each matching pattern and each path that climbs out of the root. */
function outsideNames(file: string, lineText: string): string[] {
  const names = OUTSIDE_PATTERNS.flatMap((p) => {
    const match = p.regex.exec(lineText)
    return match ? [`${p.name} (${match[0]})`] : []
  })
  for (const match of lineText.matchAll(CLIMBING_PATH)) {
    const target = relative(ROOT, resolve(ROOT, dirname(file), match[1] + match[2]))
    if (target.startsWith('..') || isAbsolute(target)) names.push(`a relative path out of the repository (${match[0]})`)
  }
  return names
}

/** The lines of one file's text that lead outside the repository. */
function outsideReferences(file: string, text: string): OutsideReference[] {
  return text.split('\n').flatMap((lineText, index) => {
    const names = outsideNames(file, lineText)
    return names.length ? [{ file, line: index + 1, names }] : []
  })
}

/** Files under `dir` (relative to the root), for a tree that is not a git checkout. */
function walk(dir: string): string[] {
  const path = join(ROOT, dir)
  if (!statSync(path, { throwIfNoEntry: false })) return []
  if (!statSync(path).isDirectory()) return [dir]
  return readdirSync(path)
    .filter((name) => name !== 'node_modules')
    .flatMap((name) => walk(join(dir, name)))
}

/** The tracked files to scan, relative to the root (a directory walk when git cannot list them). */
function scannedFiles(): string[] {
  let files: string[]
  try {
    const listed = execFileSync('git', ['ls-files', '-z', '--', ...SCANNED], { cwd: ROOT, encoding: 'utf8' })
    files = listed.split('\0').filter(Boolean)
  } catch {
    files = SCANNED.flatMap(walk)
  }
  return files.filter((file) => !file.startsWith(SKIPPED_PREFIX))
}

/** The file's text, or undefined for a binary file (one holding a NUL byte) or one deleted but still listed. */
function textOf(file: string): string | undefined {
  const path = join(ROOT, file)
  if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return undefined
  const bytes = readFileSync(path)
  return bytes.includes(0) ? undefined : bytes.toString('utf8')
}

test('no file of the repository names a path outside it or cites notes a clone does not have', () => {
  const files = scannedFiles()
  assert.ok(files.length > 100, `expected the repository's files, found ${files.length}`)
  const found = files.flatMap((file) => {
    const text = textOf(file)
    return text === undefined ? [] : outsideReferences(file, text)
  })
  const report = found.map((r) => `${r.file}:${r.line}: ${r.names.join('; ')}`).join('\n')
  assert.equal(found.length, 0, `state the fact in docs/ instead, or move the data into the repository:\n${report}`)
})

test('the scan catches each outside form and leaves paths inside the repository alone', () => {
  // Built from pieces, so that the scan of this file does not find them.
  const design = ['DESIGN', '§4'].join(' ')
  const up = (levels: number, rest: string) => '../'.repeat(levels) + rest
  const caught: [string, string][] = [
    ['src/a/b.ts', `// see ${['..', 'shared', 'DESIGN'].join('/')}.md`],
    ['src/a/b.ts', `/** The flags (${design}). */`],
    ['docs/X.md', `as ${['reference', 'ship.md'].join('/')} says`],
    ['test/_helpers/x.ts', `new URL('${up(3, 'elsewhere/data/')}', import.meta.url)`],
    ['README.md', '[notes](../notes.md)'],
  ]
  for (const [file, line] of caught) assert.equal(outsideReferences(file, line).length, 1, `${file}: ${line}`)
  const allowed: [string, string][] = [
    ['src/store/postgres/x.ts', `import { numbered } from '${up(1, 'shared')}-sql.ts'`],
    ['test/store/contract/x.ts', `import { openStore } from '${up(3, 'src/store/index.ts')}'`],
    ['test/_helpers/fixtures.ts', "new URL('../fixtures/antelope/', import.meta.url)"],
    ['docs/API.md', 'as the reference decoder does; a path/../inside stays inside'],
  ]
  for (const [file, line] of allowed) assert.deepEqual(outsideReferences(file, line), [], `${file}: ${line}`)
})
