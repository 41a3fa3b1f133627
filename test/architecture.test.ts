import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))
const MAX_SOURCE_LINES = 510

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** The areas each area may import (DESIGN §2). */
const ALLOWED: Record<string, string[]> = {
  antelope: [],
  ship: ['antelope'],
  devchain: ['antelope', 'ship'],
  store: ['antelope'],
  ingest: ['antelope', 'ship', 'store'],
  push: ['antelope', 'store'],
  auth: ['antelope', 'store'],
  state: ['antelope', 'store'],
  lifecycle: ['antelope', 'store'],
  search: ['antelope', 'store', 'lifecycle'],
  live: ['antelope', 'store'],
  api: ['antelope', 'store', 'auth', 'push', 'state', 'lifecycle', 'search', 'live'],
  cli: [
    'antelope',
    'ship',
    'devchain',
    'store',
    'ingest',
    'auth',
    'push',
    'state',
    'lifecycle',
    'search',
    'live',
    'api',
  ],
}

test('imports follow DESIGN §2: allowed edges only, and only through an area index.ts', () => {
  const problems: string[] = []
  for (const file of files(SRC)) {
    const area = relative(SRC, file).split('/')[0]
    const source = readFileSync(file, 'utf8')
    for (const match of source.matchAll(/from '(\.[^']+)'/g)) {
      const target = relative(SRC, resolve(dirname(file), match[1]))
      const targetArea = target.split('/')[0]
      if (targetArea === area) continue
      if (!(ALLOWED[area] ?? []).includes(targetArea))
        problems.push(`${relative(SRC, file)} imports ${targetArea}, which ${area} may not`)
      else if (target !== `${targetArea}/index.ts`)
        problems.push(`${relative(SRC, file)} reaches into ${target} instead of ${targetArea}/index.ts`)
    }
  }
  assert.deepEqual(problems, [])
})

test(`source files stay within ${MAX_SOURCE_LINES} lines and hold no module-level mutable state`, () => {
  const problems: string[] = []
  for (const file of files(SRC)) {
    const source = readFileSync(file, 'utf8')
    const lines = source.split('\n').length
    if (lines > MAX_SOURCE_LINES) problems.push(`${relative(SRC, file)} has ${lines} lines`)
    if (/^export let |globalThis/m.test(source)) problems.push(`${relative(SRC, file)} has module-level mutable state`)
  }
  assert.deepEqual(problems, [])
})
