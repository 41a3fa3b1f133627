import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** Recorded nodeos answers from real chains, kept in the repository (`test/fixtures/antelope/README.md`). */
export const ANTELOPE_FIXTURES_DIR = fileURLToPath(new URL('../fixtures/antelope/', import.meta.url))

/** A recorded nodeos answer: `{status, response}`. */
export function loadAntelopeFixture<T = Record<string, unknown>>(name: string): { status: number; response: T } {
  return JSON.parse(readFileSync(ANTELOPE_FIXTURES_DIR + name, 'utf8'))
}
