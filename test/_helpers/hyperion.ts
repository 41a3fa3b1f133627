import { APIClient, PrivateKey } from '@wharfkit/antelope'
import { devKey, pollUntil, pushActions as pushInBlock, waitIndexed, type ActionSpec } from './push.ts'

/**
 * The seed the Hyperion acceptance tests read back through every client: on a fresh `antler dev`, a fresh account
 * created by alice with its own key, funded and spending EOS, a transaction with two identical transfer actions, an
 * `updateauth` adding a permission with a second key, and a `linkauth` of eosio.token::transfer to that permission.
 */
export interface HyperionSeed {
  /** The fresh account (12 letters, unique per run). */
  readonly account: string
  /** Who created it (newaccount's creator and authorizer). */
  readonly creator: 'alice'
  /** The key of the account's owner and active permissions (its own, not the devchain's). */
  readonly ownerKey: string
  /**
   * The key the updateauth added, on the new permission `permission` (parent active), which also names alice@active.
   */
  readonly addedKey: string
  /** The account the new permission names (so get_controlled_accounts of it finds `account`). */
  readonly controller: 'alice'
  readonly permission: 'hot'
  /** The transactions, in the order pushed: each id and block. */
  readonly trx: {
    readonly create: Pushed
    /** alice → account 10.0000 EOS. */
    readonly fund: Pushed
    /** account → bob 1.0000 EOS. */
    readonly send: Pushed
    /** Two identical account → carol 0.5000 EOS transfers (same memo) in one transaction. */
    readonly twice: Pushed
    readonly updateauth: Pushed
    readonly linkauth: Pushed
  }
  /** The account's EOS balance after the seed: 10 - 1 - 2 × 0.5. */
  readonly balance: '8.0000 EOS'
  /** The memo of the two identical transfers. */
  readonly twiceMemo: string
}

export interface Pushed {
  readonly id: string
  readonly blockNum: number
  readonly signatures: readonly string[]
}

/** A valid, random 12-letter account name starting `hyp` (letters a–z and 1–5 only). */
export function freshAccountName(random: () => number = Math.random): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz12345'
  let name = 'hyp'
  while (name.length < 12) name += alphabet[Math.floor(random() * alphabet.length)]
  return name
}

const transfer = (from: string, to: string, quantity: string, memo: string): ActionSpec => ({
  account: 'eosio.token',
  name: 'transfer',
  actor: from,
  data: { from, to, quantity, memo },
})

/** One key's authority (threshold 1). */
const keyAuthority = (key: string) => ({ threshold: 1, keys: [{ key, weight: 1 }], accounts: [], waits: [] })

/**
 * Pushes the seed to the devchain at `chainApi` (each transaction after the previous one's block) and waits until the
 * API at `api` has indexed the last block.
 */
export async function seedHyperion(chainApi: string, api: string): Promise<HyperionSeed> {
  const chain = new APIClient({ url: chainApi })
  // Each seed transaction in a block of its own: the tests select by block (block_num ranges, after/before).
  const pushActions = async (...args: Parameters<typeof pushInBlock>) => {
    const pushed = await pushInBlock(...args)
    await pollUntil(
      () => chain.v1.chain.get_info(),
      (info) => Number(info.head_block_num) > pushed.blockNum,
    )
    return pushed
  }
  const account = freshAccountName()
  const owner = PrivateKey.generate('K1')
  const added = PrivateKey.generate('K1')
  const ownerKey = String(owner.toPublic())
  const addedKey = String(added.toPublic())
  const asAccount = { keys: [owner] }
  const twiceMemo = `twice ${account}`

  const create = await pushActions(chain, [
    {
      account: 'eosio',
      name: 'newaccount',
      actor: 'alice',
      data: { creator: 'alice', name: account, owner: keyAuthority(ownerKey), active: keyAuthority(ownerKey) },
    },
  ])
  const fund = await pushActions(chain, [transfer('alice', account, '10.0000 EOS', 'fund')], { keys: [devKey] })
  const send = await pushActions(chain, [transfer(account, 'bob', '1.0000 EOS', 'send')], asAccount)
  const twice = await pushActions(
    chain,
    [transfer(account, 'carol', '0.5000 EOS', twiceMemo), transfer(account, 'carol', '0.5000 EOS', twiceMemo)],
    asAccount,
  )
  const updateauth = await pushActions(
    chain,
    [
      {
        account: 'eosio',
        name: 'updateauth',
        actor: account,
        data: {
          account,
          permission: 'hot',
          parent: 'active',
          auth: {
            ...keyAuthority(addedKey),
            accounts: [{ permission: { actor: 'alice', permission: 'active' }, weight: 1 }],
          },
        },
      },
    ],
    asAccount,
  )
  const linkauth = await pushActions(
    chain,
    [
      {
        account: 'eosio',
        name: 'linkauth',
        actor: account,
        data: { account, code: 'eosio.token', type: 'transfer', requirement: 'hot' },
      },
    ],
    asAccount,
  )
  await waitIndexed(api, linkauth.blockNum)
  return {
    account,
    creator: 'alice',
    ownerKey,
    addedKey,
    controller: 'alice',
    permission: 'hot',
    trx: { create, fund, send, twice, updateauth, linkauth },
    balance: '8.0000 EOS',
    twiceMemo,
  }
}

/** One action trace as `/v0/transactions/{id}` (dfuse's TransactionLifecycle) answers it, the fields read here. */
export interface DfuseActionTrace {
  readonly action_ordinal: number
  readonly creator_action_ordinal: number
  readonly receiver: string
  readonly receipt: { receiver: string; act_digest: string; global_sequence: string; recv_sequence: string }
  readonly act: {
    account: string
    name: string
    authorization: { actor: string; permission: string }[]
    data: unknown
  }
  readonly trx_id: string
  readonly block_num: number
  readonly block_time: string
  readonly inline_traces?: DfuseActionTrace[]
}

/** An action as Hyperion lists it: one per action, its notifications folded into `receivers` (in receipt order). */
export interface FoldedAction {
  readonly trx_id: string
  readonly block_num: number
  /** The global sequence of the action's own receipt (the first). */
  readonly global_sequence: number
  readonly action_ordinal: number
  readonly account: string
  readonly name: string
  readonly actors: string[]
  readonly receivers: string[]
  readonly data: unknown
}

/** Every trace of a tree of action traces (inline_traces nested), in global sequence order. */
export function flattenTraces(traces: readonly DfuseActionTrace[]): DfuseActionTrace[] {
  const all: DfuseActionTrace[] = []
  const walk = (list: readonly DfuseActionTrace[]) => {
    for (const trace of list) {
      all.push(trace)
      walk(trace.inline_traces ?? [])
    }
  }
  walk(traces)
  return all.sort((a, b) => Number(a.receipt.global_sequence) - Number(b.receipt.global_sequence))
}

/**
 * Folds a transaction's traces as Hyperion does: a trace is a notification when its receiver is not the action's
 * contract and its creator is a trace of the same action (same act_digest); it joins its creator's receipts. Every
 * other trace is an action of its own.
 */
export function foldTraces(traces: readonly DfuseActionTrace[]): FoldedAction[] {
  const flat = flattenTraces(traces)
  const byOrdinal = new Map(flat.map((t) => [t.action_ordinal, t]))
  const originOf = (trace: DfuseActionTrace): DfuseActionTrace => {
    const creator = byOrdinal.get(trace.creator_action_ordinal)
    if (trace.receiver === trace.act.account || !creator || creator.receipt.act_digest !== trace.receipt.act_digest)
      return trace
    return originOf(creator)
  }
  const folded = new Map<number, { origin: DfuseActionTrace; receivers: string[] }>()
  for (const trace of flat) {
    const origin = originOf(trace)
    const entry = folded.get(origin.action_ordinal) ?? { origin, receivers: [] }
    entry.receivers.push(trace.receiver)
    folded.set(origin.action_ordinal, entry)
  }
  return [...folded.values()]
    .map(({ origin, receivers }) => ({
      trx_id: origin.trx_id,
      block_num: origin.block_num,
      global_sequence: Number(origin.receipt.global_sequence),
      action_ordinal: origin.action_ordinal,
      account: origin.act.account,
      name: origin.act.name,
      actors: origin.act.authorization.map((a) => a.actor),
      receivers,
      data: origin.act.data,
    }))
    .sort((a, b) => a.global_sequence - b.global_sequence)
}

/** Whether Hyperion's `account=` matches the action: a receiver (notified) or an authorizer. */
export const involves = (action: FoldedAction, account: string): boolean =>
  action.receivers.includes(account) || action.actors.includes(account)
