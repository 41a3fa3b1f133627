import { readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** The repository's root folder. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The extensions of the code the tree checks read: TypeScript and ESM JavaScript. */
export const CODE_EXTENSIONS: readonly string[] = ['.ts', '.mjs', '.js']

/** Every code file under `dir` (absolute path), recursively, in a stable order. */
export function codeFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : codeFiles(path)
      return CODE_EXTENSIONS.includes(extname(name)) ? [path] : []
    })
}

/** A code file read and parsed by the TypeScript compiler (syntax only: nothing is resolved or type-checked). */
export interface ParsedCode {
  readonly path: string
  readonly text: string
  readonly ast: ts.SourceFile
}

export function parseCode(path: string): ParsedCode {
  const text = readFileSync(path, 'utf8')
  const kind = extname(path) === '.ts' ? ts.ScriptKind.TS : ts.ScriptKind.JS
  return { path, text, ast: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind) }
}

/** The number of lines of a text, as `wc -l` counts them plus an unterminated last line. */
export function lineCount(text: string): number {
  if (text === '') return 0
  const newlines = text.split('\n').length - 1
  return text.endsWith('\n') ? newlines : newlines + 1
}
