/**
 * nodeos's history_plugin paging for `POST /v1/history/get_actions` (docs/HYPERION.md). An account's history is a list
 * numbered from 0 (`account_action_seq`); `pos` and `offset` pick an inclusive window of it:
 *
 * - `pos` -1 (the default) stands for the list's length (one past the last entry); an account with no history then
 *   gets nodeos's placeholder position 0xfffffff, whose windows are empty;
 * - `offset` > 0: from `pos` to `pos + offset`; otherwise (default -20) from `pos + offset` to `pos`.
 *
 * nodeos computes in 32-bit integers (an overflow there is an error or an empty answer); here the window is exact, and
 * a start below 0 means from the first entry. Entries are answered in ascending order, at most `max` of them from the
 * start: nodeos stops at its time limit and says so with `time_limit_exceeded_error`.
 */

/** nodeos's position for `pos` -1 when the account has no history. */
export const NODEOS_NO_HISTORY_POS = 0xfffffff

/** Default `pos` and `offset`, as nodeos. */
export const V1_DEFAULT_POS = -1
export const V1_DEFAULT_OFFSET = -20

/** The entries a request answers: indexes `first` to `last` inclusive (empty when first > last). */
export interface ActionWindow {
  readonly first: number
  readonly last: number
  /** Entries of the asked window left out because it holds more than `max`. */
  readonly truncated: boolean
}

/** The window of a list of `count` entries that `pos` and `offset` ask for, at most `max` entries. */
export function nodeosActionWindow(args: { pos: number; offset: number; count: number; max: number }): ActionWindow {
  const { offset, count, max } = args
  const pos = args.pos === -1 ? (count > 0 ? count : NODEOS_NO_HISTORY_POS) : args.pos
  const start = offset > 0 ? pos : pos + offset
  const end = offset > 0 ? pos + offset : pos
  const first = Math.max(0, start)
  const lastAsked = Math.min(count - 1, end)
  const last = Math.min(lastAsked, first + max - 1)
  return { first, last, truncated: last < lastAsked }
}
