import { refBlockPrefix } from '../../antelope/index.ts'
import { chainErrors } from '../errors.ts'
import type { StateDb } from '../state/state-db.ts'
import { AuthorityChecker, declaredPermissionSuffices } from './authority.ts'
import type { DecodedTransaction } from './intake.ts'

const MAX_TRANSACTION_LIFETIME_SEC = 3600

/** What the checks of an input transaction read from the pending block. */
export interface TransactionCheckContext {
  readonly state: StateDb
  /** Id of the canonical block `num`, when it is still in the TAPOS window. */
  readonly blockIdAt: (num: number) => string | undefined
  /** The pending block's time, in seconds. */
  readonly blockTimeSec: number
  /** The number of the block the pending block follows. */
  readonly previousNum: number
}

/**
 * Validates an input transaction before it runs, failing with nodeos's error codes and messages:
 * actions present, expiration (not past, at most an hour ahead), the TAPOS reference block,
 * duplicates, existing code accounts, context-free actions without authorizations, then
 * authorization against `keys` (undefined = trusted input: no authorization check).
 */
export function checkTransaction(
  ctx: TransactionCheckContext,
  trx: DecodedTransaction,
  keys: ReadonlySet<string> | undefined,
): void {
  const { state, blockTimeSec } = ctx
  if (trx.actions.length === 0) throw chainErrors.txNoAction('transaction must have at least one action')
  if (trx.expirationSec <= blockTimeSec)
    throw chainErrors.expiredTx(
      `expired transaction ${trx.id}, expiration ${chainTime(trx.expirationSec)}, block time ${chainTime(blockTimeSec)}`,
    )
  if (trx.expirationSec > blockTimeSec + MAX_TRANSACTION_LIFETIME_SEC)
    throw chainErrors.txExpTooFar(
      `Transaction expiration is too far in the future relative to the reference time of ${chainTime(blockTimeSec)}, ` +
        `expiration is ${chainTime(trx.expirationSec)} and the maximum transaction lifetime is ${MAX_TRANSACTION_LIFETIME_SEC} seconds`,
    )
  const refNum = tapsBlockNum(ctx.previousNum, trx.refBlockNum)
  const refId = refNum === undefined ? undefined : ctx.blockIdAt(refNum)
  if (!refId || refBlockPrefix(refId) !== trx.refBlockPrefix)
    throw chainErrors.invalidRefBlock(
      `Transaction's reference block did not match. Is this transaction from a different fork? ref_block_num ${trx.refBlockNum}, ref_block_prefix ${trx.refBlockPrefix}`,
    )
  if (state.has('_recent_transaction', trx.id)) throw chainErrors.txDuplicate(`duplicate transaction ${trx.id}`)
  for (const act of [...trx.actions, ...trx.contextFreeActions]) {
    if (!state.has('account', act.account))
      throw chainErrors.transaction(`action's code account '${act.account}' does not exist`)
  }
  for (const act of trx.contextFreeActions)
    if (act.authorization.length > 0) throw chainErrors.transaction('context-free actions cannot have authorizations')
  if (!keys) return
  checkAuthorization(state, trx, keys)
}

/** Every declared authority exists, suffices for its action and is satisfied by `keys`; no key is unused. */
function checkAuthorization(state: StateDb, trx: DecodedTransaction, keys: ReadonlySet<string>): void {
  const checker = new AuthorityChecker(state, keys)
  for (const act of trx.actions) {
    if (act.authorization.length === 0)
      throw chainErrors.transaction('transaction must have at least one authorization per action')
    for (const level of act.authorization) {
      if (!state.has('account', level.actor))
        throw chainErrors.transaction(`action's authorizing actor '${level.actor}' does not exist`)
      if (!state.has('permission', `${level.actor}@${level.permission}`))
        throw chainErrors.transaction(
          `action declares irrelevant authority '${JSON.stringify(level)}'; permission does not exist`,
        )
      if (!declaredPermissionSuffices(state, level, act.account, act.name))
        throw chainErrors.irrelevantAuth(
          `action declares irrelevant authority '${JSON.stringify(level)}'; minimum authority is higher`,
        )
      if (!checker.satisfies(level)) {
        throw chainErrors.unsatisfiedAuthorization(
          `transaction declares authority '${JSON.stringify(level)}', but does not have signatures for it.`,
        )
      }
    }
  }
  for (const key of keys)
    if (!checker.usedKeys.has(key))
      throw chainErrors.txIrrelevantSig(`transaction includes an irrelevant signature from public key ${key}`)
}

/** The most recent block number whose low 16 bits are `refBlockNum`, at or below the previous block. */
function tapsBlockNum(head: number, refBlockNum: number): number | undefined {
  const candidate = (head & ~0xffff) | refBlockNum
  const num = candidate > head ? candidate - 0x10000 : candidate
  return num >= 1 ? num : undefined
}

/** A time in seconds as nodeos prints it in its messages (`2026-11-27T14:43:08`). */
function chainTime(sec: number): string {
  return new Date(sec * 1000).toISOString().slice(0, 19)
}
