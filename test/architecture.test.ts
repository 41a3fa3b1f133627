import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'
import { MEMO_MARKER, moduleState } from './_helpers/module-state.ts'
import { REPO_ROOT, codeFiles, lineCount, parseCode, type ParsedCode } from './_helpers/source-tree.ts'

// The area rules docs/ARCHITECTURE.md describes: what each folder of src/ may import, only through
// the other area's index.ts, and source files small enough to read whole.

const SRC = join(REPO_ROOT, 'src')

/**
 * The tree is Prettier-formatted (`npm run lint` runs `prettier --check .`), so the lines counted
 * here are formatted lines: a file cannot get under the cap by packing code into long lines.
 */
const MAX_SOURCE_LINES = 400

/**
 * The areas each area of src/ may import. Dependencies point down only, so the graph has no cycle:
 * antelope (chain primitives) at the bottom; the devchain uses the chain primitives and the SHiP
 * protocol only; the store, then the services above it (auth, push, state, lifecycle, search,
 * live); the API on the services; the CLI wires everything. Nothing imports api or cli. Add a line
 * here when an area is added.
 */
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
  graphql: ['antelope', 'store', 'auth', 'lifecycle', 'search', 'live'],
  webhooks: ['antelope', 'store', 'search', 'live', 'graphql'],
  accounts: ['antelope', 'store'],
  hyperion: ['antelope', 'store', 'state', 'lifecycle', 'search', 'live', 'auth'],
  api: [
    'antelope',
    'store',
    'auth',
    'push',
    'state',
    'lifecycle',
    'search',
    'live',
    'graphql',
    'webhooks',
    'accounts',
    'hyperion',
  ],
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
    'graphql',
    'webhooks',
    'accounts',
    'api',
  ],
}

/** One place a file names another module; `specifier` is undefined when it is computed at run time. */
interface ModuleReference {
  readonly specifier: string | undefined
  readonly line: number
  readonly how: string
}

/**
 * Every module a file names, found in its syntax tree (so text in comments or strings is not
 * mistaken for an import): `import … from`, a side-effect `import '…'`, `export … from`, a dynamic
 * `import(…)`, `import x = require(…)`, `require(…)` and a type-level `import('…').T`.
 */
function moduleReferences({ ast }: ParsedCode): ModuleReference[] {
  const found: ModuleReference[] = []
  const add = (node: ts.Node, specifier: ts.Node | undefined, how: string) =>
    found.push({
      specifier: specifier && ts.isStringLiteralLike(specifier) ? specifier.text : undefined,
      line: ast.getLineAndCharacterOfPosition(node.getStart(ast)).line + 1,
      how,
    })
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node))
      add(node, node.moduleSpecifier, node.importClause ? 'an import' : 'a side-effect import')
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add(node, node.moduleSpecifier, 'a re-export')
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, node.moduleReference.expression, 'an import = require')
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node, node.arguments[0], 'a dynamic import')
    else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require')
      add(node, node.arguments[0], 'a require')
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      add(node, node.argument.literal, 'a type import')
    ts.forEachChild(node, visit)
  }
  visit(ast)
  return found
}

/** What is wrong with one module reference of a file in `area`, if anything. */
function importProblem(file: string, area: string, ref: ModuleReference): string | undefined {
  const where = `${relative(REPO_ROOT, file)}:${ref.line}`
  if (ref.specifier === undefined) return `${where} has ${ref.how} of a computed module, which this test cannot check`
  // Packages and node: builtins; anything else is a path into the tree.
  if (!ref.specifier.startsWith('.') && !isAbsolute(ref.specifier) && !ref.specifier.startsWith('file:'))
    return undefined
  const target = relative(SRC, resolve(dirname(file), ref.specifier.replace(/^file:\/\//, '')))
  if (target.startsWith('..') || isAbsolute(target))
    return `${where} has ${ref.how} of ${ref.specifier}, outside src/ (src/ never uses test/, bench/ or bin/)`
  const targetArea = target.split(sep)[0]
  if (targetArea === area) return undefined
  if (!(ALLOWED[area] ?? []).includes(targetArea))
    return `${where} has ${ref.how} of ${targetArea}, which ${area} may not import`
  if (target !== join(targetArea, 'index.ts'))
    return `${where} has ${ref.how} reaching into ${target} instead of ${targetArea}/index.ts`
  return undefined
}

// bin/ and bench/ stand outside the areas: bin/antler.js starts src/cli/main.ts and the benchmarks
// time internals (the devchain's SHiP server) directly, so the area rule does not apply to them.
test('src/ imports follow the area rules (allowed edges only, through an area index.ts), imports of every form', () => {
  const problems: string[] = []
  for (const file of codeFiles(SRC)) {
    const area = relative(SRC, file).split(sep)[0]
    const code = parseCode(file)
    for (const ref of moduleReferences(code)) {
      const problem = importProblem(file, area, ref)
      if (problem) problems.push(problem)
    }
  }
  assert.deepEqual(problems, [])
})

test(`src/ files stay within ${MAX_SOURCE_LINES} formatted lines`, () => {
  const problems: string[] = []
  for (const file of codeFiles(SRC)) {
    const lines = lineCount(readFileSync(file, 'utf8'))
    if (lines > MAX_SOURCE_LINES) problems.push(`${relative(REPO_ROOT, file)} has ${lines} lines`)
  }
  assert.deepEqual(problems, [])
})

// State shared by every caller of a module outlives tests and requests and couples them: state belongs to an
// instance its owner creates. Constant tables are typed Readonly; a bounded memo cache of a pure function may stay
// with a `module-memo:` comment saying why.
test('src/ holds no module-level mutable state (let, var, a container, a literal the module changes, globalThis)', () => {
  const problems: string[] = []
  for (const file of codeFiles(SRC)) {
    const code = parseCode(file)
    const where = relative(REPO_ROOT, file)
    for (const state of moduleState(code))
      problems.push(`${where}:${state.line} ${state.name} is module-level mutable state: ${state.what}`)
    if (/globalThis/.test(code.text)) problems.push(`${where} uses globalThis`)
  }
  const fixes =
    'move the state onto an instance its owner creates; type a constant table ReadonlySet/ReadonlyMap; mark a ' +
    `bounded memo cache of a pure function with a comment "// ${MEMO_MARKER} why it is safe to share"`
  assert.deepEqual(problems, [], fixes)
})
