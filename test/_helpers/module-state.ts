import ts from 'typescript'
import type { ParsedCode } from './source-tree.ts'

/**
 * The marker that allows a module-level memo cache: a comment on the declaration starting with it, then why the
 * cache is safe to share (it memoizes a deterministic function, so no caller can tell it is there).
 */
export const MEMO_MARKER = 'module-memo:'

/** Constructors whose instances are mutable containers. */
const CONTAINERS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array', 'WeakRef'])

/** Methods that change an array or an object in place. */
const MUTATING_METHODS = new Set(['push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'copyWithin'])

/** One module-level binding a file may change: its line, its name and what makes it mutable. */
export interface ModuleState {
  readonly line: number
  readonly name: string
  readonly what: string
}

/** `x` of `x`, `x.a`, `x[i].b`, `(x as T).a`: the variable an access path starts from. */
function rootName(node: ts.Expression): string | undefined {
  let e: ts.Expression = node
  for (;;) {
    if (ts.isIdentifier(e)) return e.text
    if (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) e = e.expression
    else if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) e = e.expression
    else if (ts.isSatisfiesExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression
    else return undefined
  }
}

/** Whether `node` changes a property or an element reached from the variable `name`. */
function mutatesThrough(node: ts.Node, name: string): boolean {
  const member = (e: ts.Expression) =>
    (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) && rootName(e) === name
  if (ts.isBinaryExpression(node)) {
    const op = node.operatorToken.kind
    return op >= ts.SyntaxKind.FirstAssignment && op <= ts.SyntaxKind.LastAssignment && member(node.left)
  }
  if (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) {
    const op = node.operator
    return (op === ts.SyntaxKind.PlusPlusToken || op === ts.SyntaxKind.MinusMinusToken) && member(node.operand)
  }
  if (ts.isDeleteExpression(node)) return member(node.expression)
  if (ts.isCallExpression(node)) {
    const callee = node.expression
    if (ts.isPropertyAccessExpression(callee) && MUTATING_METHODS.has(callee.name.text))
      return rootName(callee.expression) === name
    // Object.assign(x, …)
    const first = node.arguments[0]
    return (
      ts.isPropertyAccessExpression(callee) &&
      ts.isIdentifier(callee.expression) &&
      callee.expression.text === 'Object' &&
      callee.name.text === 'assign' &&
      first !== undefined &&
      rootName(first) === name
    )
  }
  return false
}

/** Whether anything in the file changes what the variable `name` holds (the first such place). */
function mutated(ast: ts.SourceFile, name: string): boolean {
  let found = false
  const visit = (node: ts.Node): void => {
    if (found) return
    if (mutatesThrough(node, name)) found = true
    else ts.forEachChild(node, visit)
  }
  visit(ast)
  return found
}

/** The expression under `as`, `satisfies`, `!` and parentheses. */
function unwrapped(e: ts.Expression): ts.Expression {
  while (
    ts.isParenthesizedExpression(e) ||
    ts.isAsExpression(e) ||
    ts.isSatisfiesExpression(e) ||
    ts.isNonNullExpression(e) ||
    ts.isTypeAssertionExpression(e)
  )
    e = e.expression
  return e
}

/** `ReadonlySet<…>`, `ReadonlyMap<…>`, `ReadonlyArray<…>`, `readonly T[]`: a type that lets no one change the value. */
function readOnly(type: ts.TypeNode | undefined): boolean {
  if (!type) return false
  if (ts.isTypeOperatorNode(type)) return type.operator === ts.SyntaxKind.ReadonlyKeyword
  return ts.isTypeReferenceNode(type) && /^Readonly(Set|Map|Array)$/.test(type.typeName.getText())
}

/** What makes a module-level `const` mutable state, if anything: a container, or a literal the file changes. */
function mutableConst(ast: ts.SourceFile, declaration: ts.VariableDeclaration): string | undefined {
  if (!declaration.initializer || !ts.isIdentifier(declaration.name)) return undefined
  const value = unwrapped(declaration.initializer)
  const name = declaration.name.text
  if (ts.isNewExpression(value) && ts.isIdentifier(value.expression) && CONTAINERS.has(value.expression.text))
    return readOnly(declaration.type) ? undefined : `a new ${value.expression.text}`
  if ((ts.isArrayLiteralExpression(value) || ts.isObjectLiteralExpression(value)) && mutated(ast, name))
    return `${ts.isArrayLiteralExpression(value) ? 'an array' : 'an object'} literal the module changes`
  return undefined
}

/** Whether a comment just before the statement starts with MEMO_MARKER and a reason. */
function markedAsMemo({ text }: ParsedCode, statement: ts.Statement): boolean {
  const comments = ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? []
  return comments.some((c) =>
    text
      .slice(c.pos, c.end)
      .replace(/^\s*(\/\/|\/\*+|\*)\s*/gm, '')
      .match(new RegExp(`^${MEMO_MARKER}\\s*\\S`)),
  )
}

/**
 * The module-level mutable state of a file, through its syntax tree: every top-level `let` and `var`, and every
 * top-level `const` bound to a mutable container (`new Map`, `Set`, `WeakMap`, `WeakSet`, `Array`) or to an array or
 * object literal the file changes (assigns a member of, calls `push` and the like on). A container typed
 * `ReadonlySet`/`ReadonlyMap`/`ReadonlyArray` is a constant table; a `const` marked with MEMO_MARKER and a reason is
 * allowed (a bounded memo cache of a deterministic function); a `let` or `var` never is.
 */
export function moduleState(code: ParsedCode): ModuleState[] {
  const { ast } = code
  const found: ModuleState[] = []
  for (const statement of ast.statements) {
    if (!ts.isVariableStatement(statement)) continue
    const list = statement.declarationList
    const keyword = list.flags & ts.NodeFlags.Let ? 'let' : list.flags & ts.NodeFlags.Const ? 'const' : 'var'
    for (const declaration of list.declarations) {
      const line = ast.getLineAndCharacterOfPosition(declaration.getStart(ast)).line + 1
      const name = declaration.name.getText(ast)
      if (keyword !== 'const') {
        found.push({ line, name, what: `a module-level ${keyword}` })
        continue
      }
      const what = mutableConst(ast, declaration)
      if (what && !markedAsMemo(code, statement)) found.push({ line, name, what })
    }
  }
  return found
}
