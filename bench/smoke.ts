import type { Figures } from './timing.ts'

/** A rate or size printed as zero: a bench that measured nothing. */
const ZERO_RATE = /(^|[^\d.,])0(\.0+)? (req\/s|rows\/s|deliveries\/s|messages\/s|action traces\/s|blocks\/s|MiB)/

/**
 * What is wrong with a bench's figures under `--smoke`: none printed, one of `expects` (parts of figure names) missing,
 * a value NaN, undefined, infinite or FAILED, a zero where there must be something (a count or rate), or a failures
 * figure that is not 0. Bars that do not hold on a tiny workload are no problem.
 */
export function smokeProblems(figures: Figures, expects: readonly string[]): string[] {
  const entries = Object.entries(figures)
  const problems = entries.length === 0 ? ['no figures'] : []
  for (const part of expects)
    if (!entries.some(([name]) => name.includes(part))) problems.push(`no figure named …${part}…`)
  for (const [name, value] of entries) {
    const failures = /fail/i.test(name)
    if (failures && value !== 0) problems.push(`${name}: ${String(value).slice(0, 300)}`)
    else if (value === '' || (typeof value === 'number' && !Number.isFinite(value))) problems.push(`${name}: ${value}`)
    else if (typeof value === 'number' && value === 0 && !failures) problems.push(`${name}: 0`)
    else if (typeof value === 'string' && /NaN|undefined|Infinity|FAILED/.test(value))
      problems.push(`${name}: ${value.slice(0, 300)}`)
    else if (typeof value === 'string' && ZERO_RATE.test(value))
      problems.push(`${name}: a zero in ${value.slice(0, 300)}`)
  }
  return problems
}
