import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

// docs/ERRORS.md against the source: every error code the source can produce has exactly one row in
// the doc's code tables (the code in backticks in the first column), every row names a code the
// source still has, and the row's HTTP column carries the status the source gives it. Codes are the
// literal after `code:` ending in `_error` anywhere in src/, the code literal of every
// `new AntlerError({…})` (whatever its suffix), and the devchain's ChainError names (its code is
// `chain_<name>`, sent as nodeos's `error.name`); any other way of building an AntlerError fails.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SRC = join(ROOT, 'src')
const DOC = join(ROOT, 'docs', 'ERRORS.md')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** 1-based line of an offset, for messages. */
const lineOf = (text: string, offset: number): number => text.slice(0, offset).split('\n').length

/** The index just past the string or template literal opening at `i` (nested `${…}` and templates included). */
function skipLiteral(text: string, i: number): number {
  const quote = text[i]
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j]
    if (c === '\\') j++
    else if (c === quote) return j + 1
    else if (quote === '`' && c === '$' && text[j + 1] === '{') j = skipBraces(text, j + 1) - 1
  }
  return text.length
}

/** The index just past the balanced `{…}` opening at `open`, strings and templates skipped. */
function skipBraces(text: string, open: number): number {
  let depth = 0
  for (let i = open; i < text.length;) {
    const c = text[i]
    if (c === "'" || c === '"' || c === '`') {
      i = skipLiteral(text, i)
      continue
    }
    if (c === '{') depth++
    else if (c === '}' && --depth === 0) return i + 1
    i++
  }
  return text.length
}

/** The text of the object literal opening at `open`. */
const objectAt = (text: string, open: number): string => text.slice(open, skipBraces(text, open))

/** What the source declares. */
interface Declared {
  /** Every `code: '…_error'` literal, with where it is. */
  readonly codes: Map<string, string[]>
  /**
   * Statuses given with a code in one `new AntlerError({…})` (500 when none is given); absent: computed at run time.
   */
  readonly statuses: Map<string, Set<number>>
  readonly retryable: Set<string>
  /** Exception names of the devchain's ChainError (`code: chain_${name}`), with their statuses. */
  readonly chainNames: Map<string, Set<number>>
  /** Error constructions whose code this test cannot read (a new way of declaring codes). */
  readonly unreadable: string[]
}

const add = <K, V>(map: Map<K, Set<V>>, key: K, value: V) =>
  (map.get(key) ?? map.set(key, new Set()).get(key)!).add(value)

function declaredInSource(): Declared {
  const declared: Declared = {
    codes: new Map(),
    statuses: new Map(),
    retryable: new Set(),
    chainNames: new Map(),
    unreadable: [],
  }
  for (const path of sourceFiles(SRC)) {
    const text = readFileSync(path, 'utf8')
    const file = relative(ROOT, path)

    // 1. The string literal after `code:` ending in `_error`, wherever it is.
    for (const m of text.matchAll(/\bcode:\s*(['"])([A-Za-z0-9_]+_error)\1/g)) {
      const where = `${file}:${lineOf(text, m.index)}`
      declared.codes.set(m[2], [...(declared.codes.get(m[2]) ?? []), where])
    }

    // 2. Every AntlerError built here must name its code as a string literal; its status comes along.
    for (const m of text.matchAll(/new AntlerError\(/g)) {
      const where = `${file}:${lineOf(text, m.index)}`
      const open = text.indexOf('{', m.index)
      const between = text.slice(m.index + m[0].length, open)
      if (open < 0 || between.trim() !== '') {
        declared.unreadable.push(`${where}: new AntlerError(…) without an object literal`)
        continue
      }
      const object = objectAt(text, open)
      // Any snake_case literal: dfuse's own codes include a few without the `_error` suffix (block_time_not_found).
      const code = /\bcode:\s*(['"])([a-z0-9_]+)\1/.exec(object)?.[2]
      if (!code) {
        declared.unreadable.push(`${where}: the code is not a snake_case string literal`)
        continue
      }
      declared.codes.set(code, [...new Set([...(declared.codes.get(code) ?? []), where])])
      const status = /\bstatus:\s*([^,}\s]+)/.exec(object)?.[1]
      if (status === undefined) add(declared.statuses, code, 500)
      else if (/^\d+$/.test(status)) add(declared.statuses, code, Number(status))
      if (/\bretryable:\s*true\b/.test(object)) declared.retryable.add(code)
    }

    // 3. Subclasses of AntlerError: only the devchain's ChainError, whose code is `chain_<nodeos exception name>`.
    for (const m of text.matchAll(/class\s+(\w+)\s+extends\s+AntlerError\b/g)) {
      const where = `${file}:${lineOf(text, m.index)}`
      const superCall = /super\(\s*\{\s*code:\s*([^,]+),/.exec(text.slice(m.index))
      if (m[1] === 'ChainError' && superCall?.[1] === '`chain_${args.chainName}`') continue
      if (superCall && /^(['"])[a-z0-9_]+\1$/.test(superCall[1].trim())) continue
      declared.unreadable.push(
        `${where}: class ${m[1]} extends AntlerError with a code this test cannot read (${superCall?.[1] ?? 'no super({ code })'})`,
      )
    }

    // The ChainError names: the chainErrors table (`make(<nodeos code>, '<name>', '<what>'[, status])`) and direct
    // constructions.
    for (const m of text.matchAll(/\bmake\(\s*\d+,\s*'([a-z0-9_]+)',\s*'[^']*'(?:,\s*(\d+))?\s*\)/g))
      add(declared.chainNames, m[1], Number(m[2] ?? 500))
    for (const m of text.matchAll(/new ChainError\(/g)) {
      const object = objectAt(text, text.indexOf('{', m.index))
      // `make` itself passes its parameters on; the names are read from its calls above.
      if (/^\{\s*chainCode,\s*chainName,/.test(object) && /const make = /.test(text)) continue
      const name = /\bchainName:\s*'([a-z0-9_]+)'/.exec(object)?.[1]
      if (!name)
        declared.unreadable.push(`${file}:${lineOf(text, m.index)}: new ChainError(…) without a chainName literal`)
      else add(declared.chainNames, name, Number(/\bstatus:\s*(\d+)/.exec(object)?.[1] ?? 500))
    }
  }
  return declared
}

/**
 * docs/ERRORS.md's code tables (those whose header's first cell is `code` or `name`): the HTTP
 * and when cells of each row, by the backticked names of its first column.
 */
function documentedRows(): Map<string, { http: string; when: string }[]> {
  const rows = new Map<string, { http: string; when: string }[]>()
  const cellsOf = (line: string) => line.split('|').map((c) => c.trim())
  const lines = readFileSync(DOC, 'utf8').split('\n')
  let inCodeTable = false
  lines.forEach((line, i) => {
    if (!/^\s*\|/.test(line)) return void (inCodeTable = false)
    const first = cellsOf(line)[1] ?? ''
    if (/^:?-+:?$/.test(first))
      return void (inCodeTable = ['code', 'name'].includes(cellsOf(lines[i - 1] ?? '')[1] ?? ''))
    if (!inCodeTable) return
    const cells = cellsOf(line)
    for (const m of first.matchAll(/`([^`]+)`/g))
      rows.set(m[1], [...(rows.get(m[1]) ?? []), { http: cells[2] ?? '', when: cells[3] ?? '' }])
  })
  return rows
}

const list = (names: Iterable<string>) => [...names].sort().join(', ')

test('every error code in src/ is declared in a form this test reads', () => {
  const declared = declaredInSource()
  assert.deepEqual(
    declared.unreadable,
    [],
    `error codes declared in a way this test does not read; teach it, then document them:\n${declared.unreadable.join('\n')}`,
  )
  // The scan works: a few codes every build has.
  for (const code of [
    'unexpected_error',
    'not_found_error',
    'auth_invalid_token_error',
    'rate_limit_exceeded_error',
    'push_timeout_error',
  ])
    assert.ok(declared.codes.has(code), `the scan did not find ${code}`)
  assert.ok(declared.chainNames.has('tx_duplicate'), 'the scan did not find the devchain exception tx_duplicate')
})

test('docs/ERRORS.md has one table row for every error code in src/', () => {
  const declared = declaredInSource()
  const rows = documentedRows()
  const expected = [...declared.codes.keys(), ...declared.chainNames.keys()]
  const missing = expected.filter((name) => !rows.has(name))
  assert.deepEqual(
    missing,
    [],
    `codes in src/ without a row in docs/ERRORS.md: ${list(missing)} (${missing.map((c) => declared.codes.get(c)?.[0] ?? 'src/devchain').join(', ')})`,
  )
  const repeated = [...rows].filter(([, r]) => r.length > 1).map(([name]) => name)
  assert.deepEqual(repeated, [], `codes with more than one row in docs/ERRORS.md: ${list(repeated)}`)
})

test('docs/ERRORS.md lists no code that src/ no longer has', () => {
  const declared = declaredInSource()
  const stale = [...documentedRows().keys()].filter(
    (name) => !declared.codes.has(name) && !declared.chainNames.has(name),
  )
  assert.deepEqual(stale, [], `rows in docs/ERRORS.md for codes src/ does not have (stale): ${list(stale)}`)
})

test("each row's HTTP column carries the source's status, and retryable codes say so", () => {
  const declared = declaredInSource()
  const rows = documentedRows()
  const wrong: string[] = []
  for (const [name, statuses] of [...declared.statuses, ...declared.chainNames]) {
    const row = rows.get(name)?.[0]
    if (!row) continue
    for (const status of statuses)
      if (!new RegExp(`\\b${status}\\b`).test(row.http)) wrong.push(`${name}: ${status} not in "${row.http}"`)
  }
  for (const code of declared.retryable) {
    const row = rows.get(code)?.[0]
    if (row && !/retryable/i.test(`${row.http} ${row.when}`))
      wrong.push(`${code}: retryable in src/, the row does not say so`)
  }
  assert.deepEqual(wrong, [], `docs/ERRORS.md rows that disagree with src/:\n${wrong.join('\n')}`)
})
