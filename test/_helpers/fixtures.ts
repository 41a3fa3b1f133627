import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The shared recorded chain data beside the repository (`../shared/fixtures/antelope`). */
export const ANTELOPE_FIXTURES_DIR = fileURLToPath(new URL('../../../shared/fixtures/antelope/', import.meta.url))

/** A recorded nodeos answer: `{status, response}`. */
export function loadAntelopeFixture<T = Record<string, unknown>>(name: string): { status: number; response: T } {
  return JSON.parse(readFileSync(ANTELOPE_FIXTURES_DIR + name, 'utf8'))
}
