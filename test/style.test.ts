import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { REPO_ROOT, codeFiles, parseCode, type ParsedCode } from './_helpers/source-tree.ts'

// Prettier wraps code at 120 columns but leaves comments and string literals as written: this
// test holds comments (and code Prettier could not break) to the same width. A long string,
// template or regular expression literal is allowed; only the characters outside literals count.

const MAX_LINE_CHARACTERS = 120
const CHECKED_FOLDERS = ['src', 'test', 'bench', 'bin', 'scripts']

/** The syntax kinds whose text is literal: strings, template pieces (not their `${…}` code), regexes. */
const LITERAL_KINDS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
])

/** One flag per UTF-16 unit of the file's text: 1 where it lies inside a string, template or regex literal. */
function literalMask({ text, ast }: ParsedCode): Uint8Array {
  const mask = new Uint8Array(text.length)
  const visit = (node: ts.Node): void => {
    if (LITERAL_KINDS.has(node.kind)) mask.fill(1, node.getStart(ast), node.getEnd())
    ts.forEachChild(node, visit)
  }
  visit(ast)
  return mask
}

/** Lines whose characters outside literals exceed the width, as `path:line: count`. */
function longLines(code: ParsedCode): string[] {
  const mask = literalMask(code)
  const found: string[] = []
  let lineStart = 0
  code.text.split('\n').forEach((line, index) => {
    if (line.length > MAX_LINE_CHARACTERS) {
      let characters = 0
      for (let i = 0; i < line.length; i++) {
        const unit = line.charCodeAt(i)
        // A character outside the BMP is two UTF-16 units: count its first only. A CR ending is no character.
        const isLowSurrogate = unit >= 0xdc00 && unit <= 0xdfff
        const isLineEnd = unit === 0x0d && i === line.length - 1
        if (!mask[lineStart + i] && !isLowSurrogate && !isLineEnd) characters++
      }
      if (characters > MAX_LINE_CHARACTERS)
        found.push(`${relative(REPO_ROOT, code.path)}:${index + 1}: ${characters} characters outside literals`)
    }
    lineStart += line.length + 1
  })
  return found
}

test(`no line of ${CHECKED_FOLDERS.join('/, ')}/ is over ${MAX_LINE_CHARACTERS} characters outside string literals (comments included)`, () => {
  const problems = CHECKED_FOLDERS.flatMap((folder) =>
    codeFiles(join(REPO_ROOT, folder)).flatMap((file) => longLines(parseCode(file))),
  )
  assert.deepEqual(problems, [])
})
