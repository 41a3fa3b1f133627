import type { SearchExpr } from '../store/index.ts'
import { InvalidSearchQueryError } from './errors.ts'
import { BOOLEAN_FIELDS, fieldKind } from './fields.ts'
import { tokenize, type Token } from './lexer.ts'

/** Limits of one query (docs/API.md): its length, its terms and how deep parentheses nest. */
export const SEARCH_QUERY_LIMITS = { maxLength: 2048, maxTerms: 64, maxDepth: 16 } as const

type TermToken = Extract<Token, { kind: 'term' }>
type Node =
  | { kind: 'term'; token: TermToken }
  | { kind: 'and' | 'or'; items: Node[]; position: number }
  | { kind: 'not'; item: Node; position: number }

/**
 * Parses a search query (dfuse's 2018–2020 grammar and its superset) into the store's
 * SearchExpr: terms `field:value`, implicit AND (or `AND`/`&&`), `OR`/`||` (lower precedence),
 * nested parentheses, `-` negation. `status:executed` is accepted and has no effect; any other
 * `status:`, and `status:` negated or under an OR, is refused. Errors say where and why
 * (`request_validation_error` naming `q`, with `position` and `reason`).
 */
export function parseSearchQuery(query: string): SearchExpr {
  const fail = (position: number, reason: string) => InvalidSearchQueryError({ query, position, reason })
  if (query.length > SEARCH_QUERY_LIMITS.maxLength)
    throw fail(SEARCH_QUERY_LIMITS.maxLength, `the query is longer than ${SEARCH_QUERY_LIMITS.maxLength} characters`)
  const tokens = tokenize(query)
  const terms = tokens.filter((t) => t.kind === 'term').length
  if (terms > SEARCH_QUERY_LIMITS.maxTerms)
    throw fail(0, `the query has ${terms} terms; at most ${SEARCH_QUERY_LIMITS.maxTerms}`)
  let at = 0
  const peek = (): Token | undefined => tokens[at]
  const end = () => query.length

  function parseOr(depth: number): Node {
    const first = parseAnd(depth)
    const items = [first]
    while (peek()?.kind === 'OR') {
      at++
      items.push(parseAnd(depth))
    }
    return items.length === 1 ? first : { kind: 'or', items, position: positionOf(first) }
  }

  function parseAnd(depth: number): Node {
    const items = [parseUnary(depth)]
    for (;;) {
      const next = peek()
      if (next?.kind === 'AND') {
        at++
        items.push(parseUnary(depth))
      } else if (next && (next.kind === 'term' || next.kind === '(' || next.kind === '-')) items.push(parseUnary(depth))
      else break
    }
    return items.length === 1 ? items[0] : { kind: 'and', items, position: positionOf(items[0]) }
  }

  function parseUnary(depth: number): Node {
    const token = peek()
    if (token?.kind === '-') {
      at++
      return { kind: 'not', item: parsePrimary(depth), position: token.position }
    }
    return parsePrimary(depth)
  }

  function parsePrimary(depth: number): Node {
    const token = peek()
    if (!token) throw fail(end(), 'the query ends where a term or ( is expected')
    if (token.kind === 'term') {
      at++
      return { kind: 'term', token }
    }
    if (token.kind === '(') {
      if (depth >= SEARCH_QUERY_LIMITS.maxDepth)
        throw fail(token.position, `parentheses nest deeper than ${SEARCH_QUERY_LIMITS.maxDepth}`)
      at++
      if (peek()?.kind === ')') throw fail(peek()!.position, 'empty parentheses')
      const inner = parseOr(depth + 1)
      const close = peek()
      if (close?.kind !== ')')
        throw fail(close?.position ?? end(), `expected ')' to close the '(' at position ${token.position}`)
      at++
      return inner
    }
    throw fail(token.position, token.kind === ')' ? "unbalanced ')'" : `expected a term or '(' before ${token.kind}`)
  }

  if (tokens.length === 0) throw fail(0, 'the query is empty')
  const tree = parseOr(0)
  const left = peek()
  if (left) throw fail(left.position, left.kind === ')' ? "unbalanced ')'" : `unexpected ${left.kind}`)
  const expr = toExpr(tree, { underOr: false, underNot: false }, fail)
  if (!expr) throw fail(0, 'the query needs a term besides status:executed')
  return expr
}

function positionOf(node: Node): number {
  return node.kind === 'term' ? node.token.position : node.position
}

type Fail = (position: number, reason: string) => Error

/** The SearchExpr of a parsed node; undefined for a dropped `status:executed`. */
function toExpr(node: Node, context: { underOr: boolean; underNot: boolean }, fail: Fail): SearchExpr | undefined {
  switch (node.kind) {
    case 'term':
      return termExpr(node.token, context, fail)
    case 'not': {
      const inner = toExpr(node.item, { ...context, underNot: true }, fail)
      return inner && { not: inner }
    }
    case 'and': {
      const items = node.items.map((n) => toExpr(n, context, fail)).filter((e): e is SearchExpr => e !== undefined)
      return items.length === 0 ? undefined : items.length === 1 ? items[0] : { and: items }
    }
    case 'or':
      return { or: node.items.map((n) => toExpr(n, { ...context, underOr: true }, fail)!) }
  }
}

function termExpr(
  token: TermToken,
  context: { underOr: boolean; underNot: boolean },
  fail: Fail,
): SearchExpr | undefined {
  const { field, value, quoted, position } = token
  switch (fieldKind(field)) {
    case undefined:
      throw fail(position, `the field ${JSON.stringify(field)} is not indexed (docs/API.md lists the fields)`)
    case 'status':
      if (value !== 'executed')
        throw fail(position, 'status: only status:executed is accepted (only executed transactions are indexed)')
      if (context.underOr || context.underNot)
        throw fail(position, 'status:executed cannot be negated or used inside OR')
      return undefined
    case 'boolean':
      if (quoted || (value !== 'true' && value !== 'false')) throw fail(position, `${field} takes true or false`)
      return { flag: BOOLEAN_FIELDS[field], value: value === 'true' }
    case 'term':
      return { term: `${field}:${value}` }
  }
}
