import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { errorDefinitions } from '../../src/antelope/index.ts'
import { CHAIN_EXCEPTIONS } from '../../src/devchain/errors.ts'

// docs/ERRORS.md against the error registry (src/antelope/error-registry.ts) and the devchain's nodeos exception
// table: every registry code has exactly one row in the doc's code tables (header `code`), with its status in the
// HTTP column and "retryable" exactly when the registry says so; every row names a registry code. The devchain
// table (header `name`) holds exactly the devchain's exception names, with their statuses and nodeos codes. The
// table of codes that differ from dfuse (header `Antler code`) names registry codes only.

const DOC = fileURLToPath(new URL('../../docs/ERRORS.md', import.meta.url))

interface Row {
  readonly cells: readonly string[]
  readonly line: number
}

/** The rows of docs/ERRORS.md's tables whose header's first cell is `header`, by the backticked names in column 1. */
function tableRows(header: string): Map<string, Row[]> {
  const rows = new Map<string, Row[]>()
  const cellsOf = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim())
  const lines = readFileSync(DOC, 'utf8').split('\n')
  let inTable = false
  lines.forEach((line, i) => {
    if (!/^\s*\|/.test(line)) return void (inTable = false)
    const cells = cellsOf(line)
    if (/^:?-+:?$/.test(cells[0] ?? '')) return void (inTable = cellsOf(lines[i - 1] ?? '')[0] === header)
    if (!inTable) return
    for (const m of (cells[0] ?? '').matchAll(/`([^`]+)`/g))
      rows.set(m[1], [...(rows.get(m[1]) ?? []), { cells, line: i + 1 }])
  })
  return rows
}

const list = (names: Iterable<string>) => [...names].sort().join(', ')
const registry = new Map(errorDefinitions())

test('the registry is read: a few codes every build has', () => {
  for (const code of ['unexpected_error', 'request_validation_error', 'auth_invalid_token_error', 'push_timeout_error'])
    assert.ok(registry.has(code as never), `the registry has ${code}`)
  assert.ok(registry.size > 50, `the registry holds every code (${registry.size})`)
})

test('docs/ERRORS.md has one row for every registry code, and none for a code the registry does not have', () => {
  const rows = tableRows('code')
  const missing = [...registry.keys()].filter((code) => !rows.has(code))
  assert.deepEqual(missing, [], `registry codes without a row in docs/ERRORS.md: ${list(missing)}`)
  const repeated = [...rows].filter(([, r]) => r.length > 1).map(([code]) => code)
  assert.deepEqual(repeated, [], `codes with more than one row in docs/ERRORS.md: ${list(repeated)}`)
  const stale = [...rows.keys()].filter((code) => !registry.has(code as never))
  assert.deepEqual(stale, [], `rows in docs/ERRORS.md for codes the registry does not have: ${list(stale)}`)
})

test("each row's HTTP column carries the registry's status, and says retryable exactly for retryable codes", () => {
  const rows = tableRows('code')
  const wrong: string[] = []
  for (const [code, definition] of registry) {
    const row = rows.get(code)?.[0]
    if (!row) continue
    const [, http = '', when = ''] = row.cells
    for (const status of definition.statuses)
      if (!new RegExp(`\\b${status}\\b`).test(http)) wrong.push(`${code}: ${status} not in "${http}"`)
    // A status computed from elsewhere (the chain's answer) is named, not numbered.
    if (definition.statuses.length === 0 && !/status/.test(http))
      wrong.push(`${code}: its status is computed; "${http}" does not say whose`)
    const saysRetryable = /retryable/i.test(`${http} ${when}`)
    if (definition.retryable !== saysRetryable)
      wrong.push(`${code}: retryable is ${definition.retryable} in the registry, the row says otherwise`)
  }
  assert.deepEqual(wrong, [], `docs/ERRORS.md rows that disagree with the registry:\n${wrong.join('\n')}`)
})

test('the codes that differ from dfuse are registry codes', () => {
  const stale = [...tableRows('Antler code').keys()].filter((code) => !registry.has(code as never))
  assert.deepEqual(stale, [], `the dfuse differences name codes the registry does not have: ${list(stale)}`)
  assert.ok(tableRows('Antler code').size > 0, 'the table of codes that differ from dfuse is read')
})

test("the devchain table lists exactly the devchain's nodeos exceptions, with their statuses and nodeos codes", () => {
  const rows = tableRows('name')
  const exceptions = Object.values(CHAIN_EXCEPTIONS)
  const names = new Set(exceptions.map((e) => e.chainName))
  assert.deepEqual(list(rows.keys()), list(names), 'the devchain table names the exceptions of CHAIN_EXCEPTIONS')
  const wrong: string[] = []
  for (const e of exceptions) {
    const row = rows.get(e.chainName)?.[0]
    if (!row) continue
    const [, http = '', , nodeosCode = ''] = row.cells
    if (!new RegExp(`\\b${e.status}\\b`).test(http)) wrong.push(`${e.chainName}: ${e.status} not in "${http}"`)
    if (nodeosCode !== String(e.chainCode)) wrong.push(`${e.chainName}: nodeos code ${e.chainCode}, not ${nodeosCode}`)
  }
  assert.deepEqual(wrong, [], `devchain rows that disagree with CHAIN_EXCEPTIONS:\n${wrong.join('\n')}`)
})
