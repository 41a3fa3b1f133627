import type { TestContext } from 'node:test'
import { join } from 'node:path'
import {
  APIClient,
  Action,
  PrivateKey,
  Serializer,
  SignedTransaction,
  Transaction,
  TimePointSec,
} from '@wharfkit/antelope'
import { DEV_PRIVATE_KEY, token, type Devchain, type DevchainConfig } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { createPushService, type PushService, type PushServiceDeps } from '../../src/push/index.ts'
import { openSqliteStore, type Store } from '../../src/store/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'

/**
 * A devchain producing on a timer, an indexer writing its blocks into a SQLite file, and a push service reading that
 * file.
 */
export interface PushRig {
  readonly devchain: Devchain
  readonly store: Store
  readonly service: PushService
  readonly client: APIClient
}

/**
 * Starts the rig. After the test, pushes still waiting are aborted, then the indexer stops, the
 * store closes, its directory goes and the devchain closes (`onCleanup`: last started, first stopped).
 */
export async function withPushRig(
  t: TestContext,
  chain: Partial<DevchainConfig> = {},
  service: Partial<PushServiceDeps> = {},
): Promise<PushRig> {
  const devchain = await withDevchain(t, { blockTimeMs: 50, libDepth: 6, ...chain })
  const store = openSqliteStore(join(tempDir(t, 'antler-push-'), 'store.sqlite'))
  const indexer = createIndexer({ shipUrl: devchain.ship, store, reconnect: { minDelayMs: 20, maxDelayMs: 100 } })
  const running = indexer.run().catch((error) => console.error('indexer stopped:', error))
  const teardown = new AbortController()
  onCleanup(t, async () => {
    teardown.abort()
    await indexer.stop()
    await running
    await store.close()
  })
  const pushService = createPushService({ chainApi: devchain.chainApi, store, pollIntervalMs: 20, ...service })
  return {
    devchain,
    store,
    service: {
      push: (args) =>
        pushService.push({
          ...args,
          signal: args.signal ? AbortSignal.any([args.signal, teardown.signal]) : teardown.signal,
        }),
    },
    client: new APIClient({ url: devchain.chainApi }),
  }
}

const key = PrivateKey.from(DEV_PRIVATE_KEY)

/**
 * A signed eosio.token transfer as a nodeos packed-transaction body (compression 0). TAPOS names
 * the chain's LIB, so a fork never invalidates it; it expires `expireSeconds` of chain time after
 * the head block (the devchain's chain time runs ahead of the wall clock when blocks come faster
 * than every 500 ms).
 */
export async function signedTransfer(
  client: APIClient,
  args: { from?: string; to?: string; quantity?: string; memo: string; expireSeconds?: number },
): Promise<Record<string, unknown>> {
  const from = args.from ?? 'alice'
  const info = await client.v1.chain.get_info()
  const header = info.getTransactionHeader(args.expireSeconds ?? 600)
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: from, permission: 'active' }],
      data: { from, to: args.to ?? 'bob', quantity: args.quantity ?? '0.0001 EOS', memo: args.memo },
    },
    token.abi,
  )
  const transaction = Transaction.from({ ...header, actions: [action] })
  const signature = key.signDigest(transaction.signingDigest(info.chain_id))
  return packedBody(SignedTransaction.from({ ...transaction, signatures: [signature] }))
}

/** The same transfer with an expiration already past (chain time). */
export async function expiredTransfer(client: APIClient, memo: string): Promise<Record<string, unknown>> {
  const info = await client.v1.chain.get_info()
  const header = info.getTransactionHeader(0)
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
    },
    token.abi,
  )
  const transaction = Transaction.from({
    ...header,
    expiration: TimePointSec.fromMilliseconds(info.head_block_time.toMilliseconds() - 10_000),
    actions: [action],
  })
  return packedBody(
    SignedTransaction.from({ ...transaction, signatures: [key.signDigest(transaction.signingDigest(info.chain_id))] }),
  )
}

function packedBody(signed: SignedTransaction): Record<string, unknown> {
  return {
    signatures: signed.signatures.map(String),
    compression: 0,
    packed_context_free_data: '',
    packed_trx: Buffer.from(Serializer.encode({ object: Transaction.from(signed) }).array).toString('hex'),
  }
}

/** POSTs JSON to the chain and returns the parsed answer, failing on a non-2xx status. */
export async function chainPost<T = Record<string, unknown>>(url: string, body: unknown): Promise<T> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body) })
  const text = await response.text()
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${text}`)
  return JSON.parse(text) as T
}
