import { ABI, APIClient, Action, PrivateKey, SignedTransaction, Transaction } from '@wharfkit/antelope'
import { DEV_PRIVATE_KEY } from '../../src/devchain/index.ts'

export const devKey = PrivateKey.from(DEV_PRIVATE_KEY)
export type ActionSpec = { account: string; name: string; actor: string; data: Record<string, unknown> }

/**
 * Signs the actions (data encoded with each contract's ABI from the chain) with `keys`, pushes them
 * and answers the transaction id, the block that includes it and the signatures sent.
 */
export async function pushActions(
  chain: APIClient,
  actions: ActionSpec[],
  options: { keys?: PrivateKey[]; delaySec?: number } = {},
): Promise<{ id: string; blockNum: number; signatures: string[] }> {
  const info = await chain.v1.chain.get_info()
  const abis = new Map<string, ABI>()
  for (const a of actions)
    if (!abis.has(a.account)) abis.set(a.account, ABI.from((await chain.v1.chain.get_abi(a.account)).abi!))
  const transaction = Transaction.from({
    ...info.getTransactionHeader(120),
    delay_sec: options.delaySec ?? 0,
    actions: actions.map((a) =>
      Action.from(
        { account: a.account, name: a.name, authorization: [{ actor: a.actor, permission: 'active' }], data: a.data },
        abis.get(a.account)!,
      ),
    ),
  })
  const digest = transaction.signingDigest(info.chain_id)
  const signatures = (options.keys ?? [devKey]).map((k) => k.signDigest(digest))
  const pushed = await chain.v1.chain.push_transaction(SignedTransaction.from({ ...transaction, signatures }))
  return {
    id: String(pushed.transaction_id),
    blockNum: Number(pushed.processed.block_num),
    signatures: signatures.map(String),
  }
}

/** Waits until the API's store holds `blockNum` (its /healthz head); throws after `timeoutMs`. */
export async function waitIndexed(api: string, blockNum: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const health = (await (await fetch(`${api}/healthz`)).json()) as { head_block_num: number | null }
    if ((health.head_block_num ?? 0) >= blockNum) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`block ${blockNum} not indexed within ${timeoutMs} ms`)
}

/** Polls `read` until `done` holds of its answer; throws with the last answer after `timeoutMs`. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: T = await read()
  while (!done(last)) {
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last answer: ${JSON.stringify(last)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    last = await read()
  }
  return last
}
