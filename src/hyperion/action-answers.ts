import type { BlockDecoderSource } from '../lifecycle/index.ts'
import type { SearchExpr, Store } from '../store/index.ts'
import {
  loadDocumentContexts,
  actionDocuments,
  transactionSignatures,
  type HyperionActionDocument,
} from './action-documents.ts'
import { hyperionTime } from './time.ts'
import { readConsistently, searchActionDocuments, type ActionSearchStore, type DocumentTotal } from './action-search.ts'

/**
 * The answers of get_transaction, check_transaction, get_creator and get_created_accounts, and get_actions' simple
 * form, over the store (docs/HYPERION.md). No HTTP here.
 */

/** What these answers read. */
export type ActionAnswerStore = ActionSearchStore & Pick<Store, 'actionsOfTransaction' | 'transactionHistory'>

/** get_actions' `simple=true` form of a document; `lib` (with checkLib) adds `irreversible`. */
export function simpleAction(doc: HyperionActionDocument, lib: number | undefined) {
  return {
    block: doc.block_num,
    timestamp: doc.timestamp,
    ...(lib === undefined ? {} : { irreversible: doc.block_num <= lib }),
    contract: doc.act.account,
    action: doc.act.name,
    actors: doc.act.authorization.map((l) => `${l.actor}@${l.permission}`).join(','),
    notified: doc.receipts.map((r) => r.receiver).join(','),
    transaction_id: doc.trx_id,
    data: doc.act.data,
  }
}

/**
 * get_transaction: the documents of the transaction's current execution (the store keeps the actions of its latest
 * inclusion only, so never those of a block forked out: Hyperion's issue 63), in full form with uint64s as strings.
 */
export async function transactionDocuments(
  store: ActionAnswerStore,
  decoders: BlockDecoderSource,
  id: string,
): Promise<{ documents: HyperionActionDocument[]; position: Awaited<ReturnType<Store['position']>> }> {
  const { value, position } = await readConsistently(store, async () => {
    const actions = await store.actionsOfTransaction(id)
    if (actions.length === 0) return []
    const [context] = await loadDocumentContexts(store, decoders, [
      { trxId: id, blockNum: actions[0].blockNum, actions },
    ])
    if (!context) return 'forked'
    return actionDocuments(actions, context, { uint64: 'string', full: true })
  })
  return { documents: value, position }
}

/** check_transaction's answer. */
export interface TransactionCheck {
  id: string
  status: 'executed' | 'forked' | 'unknown'
  block_num?: number
  root_action?: { account: string; name: string; authorization: { actor: string; permission: string }[]; data: unknown }
  signatures?: string[]
}

/**
 * check_transaction: `executed` (with its block, first action and signatures) when the current chain holds its
 * executed trace; `forked` when the store saw it only in blocks forked out since; else `unknown`. Hyperion answers
 * from a cache of the last hour; Antler from the store, for any age.
 */
export async function checkTransaction(
  store: ActionAnswerStore,
  decoders: BlockDecoderSource,
  id: string,
): Promise<TransactionCheck> {
  if (!/^[0-9a-f]{64}$/.test(id)) return { id, status: 'unknown' }
  const { value } = await readConsistently(store, async (): Promise<TransactionCheck | 'forked'> => {
    const [history, found] = await Promise.all([
      store.transactionHistory(id),
      transactionDocuments(store, decoders, id).then((t) => t.documents),
    ])
    const executed = history.records.find((r) => r.blockIndex >= 0 && r.status === 0)
    if (executed && found.length) {
      const root = found[0].act
      const signatures = transactionSignatures(executed)
      return {
        id,
        status: 'executed',
        block_num: executed.blockNum,
        root_action: { account: root.account, name: root.name, authorization: root.authorization, data: root.data },
        ...(signatures.length ? { signatures } : {}),
      }
    }
    if (executed) return 'forked'
    return { id, status: history.forkedOut.length ? 'forked' : 'unknown' }
  })
  return value
}

/** An `eosio::newaccount` query (by the new name, or by the creator's authorization). */
function newaccountExpr(term: string): SearchExpr {
  return { and: [{ term: 'account:eosio' }, { term: 'action:newaccount' }, { term }] }
}

/** The system account: created by no one, at genesis. */
const SYSTEM_ACCOUNT = 'eosio'

/**
 * get_creator: the `eosio::newaccount` that created `account` (its creator as the action's data names it), or for the
 * system account `__self__` at the first block. Undefined when the store holds no creation of it.
 */
export async function creatorOf(
  store: ActionAnswerStore,
  decoders: BlockDecoderSource,
  account: string,
): Promise<{ account: string; creator: string; timestamp: string; block_num: number; trx_id: string } | undefined> {
  if (account === SYSTEM_ACCOUNT) {
    const genesis = await store.blocksByNums([1])
    const block = genesis.get(1)
    return {
      account,
      creator: '__self__',
      timestamp: block ? hyperionTime(block.timestampMs) : '',
      block_num: 1,
      trx_id: '',
    }
  }
  const page = await searchActionDocuments(store, decoders, {
    plan: { expr: newaccountExpr(`data.name:${account}`), seq: {}, blocks: {}, time: {} },
    direction: 'forward',
    skip: 0,
    limit: 1,
    countCap: undefined,
  })
  const doc = page.documents[0]
  if (!doc) return undefined
  const data = doc.act.data as { creator?: unknown }
  const creator =
    typeof data === 'object' && data !== null && typeof data.creator === 'string'
      ? data.creator
      : doc.act.authorization[0]?.actor
  return { account, creator: creator ?? '', timestamp: doc.timestamp, block_num: doc.block_num, trx_id: doc.trx_id }
}

/** Counted up to this many (`total`). */
const CREATED_ACCOUNTS_COUNT_CAP = 10_000

/** get_created_accounts: the accounts `account` created (it authorized their `eosio::newaccount`), newest first. */
export async function createdAccounts(
  store: ActionAnswerStore,
  decoders: BlockDecoderSource,
  args: { account: string; skip: number; limit: number },
): Promise<{ accounts: { name: string; timestamp: string; trx_id: string }[]; total: DocumentTotal | undefined }> {
  const page = await searchActionDocuments(store, decoders, {
    plan: { expr: newaccountExpr(`auth:${args.account}`), seq: {}, blocks: {}, time: {} },
    direction: 'backward',
    skip: args.skip,
    limit: args.limit,
    countCap: CREATED_ACCOUNTS_COUNT_CAP,
  })
  const accounts = page.documents.map((doc) => {
    const data = doc.act.data as { newact?: unknown }
    return {
      name: typeof data === 'object' && data !== null && typeof data.newact === 'string' ? data.newact : '',
      timestamp: doc.timestamp,
      trx_id: doc.trx_id,
    }
  })
  return { accounts, total: page.total }
}
