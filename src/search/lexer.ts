import { InvalidSearchQueryError } from './errors.ts'

/** A token of the query language, with its 0-based position in the query. */
export type Token =
  | { readonly kind: '(' | ')' | '-' | 'OR' | 'AND'; readonly position: number }
  | {
      readonly kind: 'term'
      readonly field: string
      readonly value: string
      readonly quoted: boolean
      readonly position: number
    }

const SPACE = /\s/
const FIELD_CHAR = /[A-Za-z0-9_.]/
/** Characters a bare value cannot hold (dfuse's rule), besides whitespace and quotes. */
const NOT_IN_BARE_VALUE: ReadonlySet<string> = new Set([':', '<', '>', '(', ')', '=', '!', '"', "'"])

/** The word at `i` is exactly `word`, followed by a space, a parenthesis or the end. */
function isWord(query: string, i: number, word: string): boolean {
  if (!query.startsWith(word, i)) return false
  const next = query[i + word.length]
  return next === undefined || SPACE.test(next) || next === '(' || next === ')'
}

/**
 * Splits a query into tokens: `(`, `)`, `-` (negation, directly before a term or a parenthesis),
 * `OR`/`||`, `AND`/`&&`, and terms `field:value` with bare or quoted (`"…"`, `'…'`, no escapes) values.
 */
export function tokenize(query: string): Token[] {
  const tokens: Token[] = []
  const fail = (position: number, reason: string) => InvalidSearchQueryError({ query, position, reason })
  let i = 0
  while (i < query.length) {
    const c = query[i]
    if (SPACE.test(c)) {
      i++
      continue
    }
    if (c === '(' || c === ')') {
      tokens.push({ kind: c, position: i++ })
      continue
    }
    if (isWord(query, i, 'OR') || isWord(query, i, '||')) {
      tokens.push({ kind: 'OR', position: i })
      i += 2
      continue
    }
    if (isWord(query, i, 'AND') || isWord(query, i, '&&')) {
      tokens.push({ kind: 'AND', position: i })
      i += query[i] === 'A' ? 3 : 2
      continue
    }
    if (c === '-') {
      const next = query[i + 1]
      if (next === undefined || SPACE.test(next) || next === ')' || next === '-')
        throw fail(i, "'-' must be directly followed by a term or '('")
      tokens.push({ kind: '-', position: i++ })
      continue
    }
    // A term: field, colon, value.
    const start = i
    while (i < query.length && FIELD_CHAR.test(query[i])) i++
    if (i === start) throw fail(i, `unexpected ${JSON.stringify(c)}`)
    const field = query.slice(start, i)
    if (query[i] !== ':') throw fail(i, `expected ':' after ${JSON.stringify(field)} (terms are field:value)`)
    i++
    const open = query[i]
    if (open === '"' || open === "'") {
      const close = query.indexOf(open, i + 1)
      if (close < 0) throw fail(i, `unterminated ${open === '"' ? 'double' : 'single'}-quoted value`)
      tokens.push({ kind: 'term', field, value: query.slice(i + 1, close), quoted: true, position: start })
      i = close + 1
    } else {
      const valueStart = i
      while (i < query.length && !SPACE.test(query[i]) && !NOT_IN_BARE_VALUE.has(query[i])) i++
      if (i === valueStart) throw fail(i, `expected a value after ${JSON.stringify(`${field}:`)}`)
      tokens.push({ kind: 'term', field, value: query.slice(valueStart, i), quoted: false, position: start })
    }
    const after = query[i]
    if (after !== undefined && !SPACE.test(after) && after !== ')')
      throw fail(i, `unexpected ${JSON.stringify(after)} after a value (quote values holding it)`)
  }
  return tokens
}
