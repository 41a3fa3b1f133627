import { ABI, Serializer } from '@wharfkit/antelope'
import { encodeAbiBinary, toHex, type RawAction } from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import type { DecodedTransaction } from './chain/intake.ts'
import { GENESIS_USERS } from './chain/boot.ts'
import { keyAuthority } from './chain/genesis.ts'
import { NFTDEMO_ABIS, encodeMint, nftGenerationOf, nftdemo, type NftGeneration } from './contracts/nftdemo.ts'
import { trustedHeaderFor, trustedTransaction, type TrustedHeader } from './trusted-transaction.ts'
import { transferAction } from './workload-actions.ts'

/**
 * The dense profile: blocks shaped like a busy mainnet block (the WAX block of
 * test/fixtures/antelope/wax-get_block-258546986.json has 372 transactions, 5 of them zlib-packed). Each block holds
 * about 300 input transactions (docs/DEVCHAIN.md lists the mix):
 * - `transfers` eosio.token transfers (three action traces each: the token contract, then `from` and `to` notified),
 *   and `doubleTransfers` transactions of two transfers;
 * - `mints` nftdemo mints, each writing `rowsPerMint` asset rows of 200 to 400 bytes and the collection's stats row,
 *   notifying the owner and sending inline `log` actions `hops` levels deep (8 action traces per mint at 3 hops);
 * - one transaction in `zlibEvery` zlib-packed (compression 1);
 * - two deferred (delayed) transfers, which run two blocks later as scheduled transactions: one executes, the other
 *   overdraws its sender and ends with a hard_fail receipt (the only failed transactions a block holds: nodeos puts
 *   no receipt in a block for a refused input transaction);
 * - every `abiEveryBlocks` blocks, a `setabi` of nftdemo switching it to its other ABI generation (a different
 *   layout of `mint` and of the asset rows), first in the block, so the mints after it use the new layout.
 * The first block also creates the nftdemo account, its code and ABI, and its `eosio.code` permission, so the
 * default devchain (and its genesis) stay as they are. Transfers go both ways in pairs, so balances do not drift.
 */
export const DENSE_MIX = {
  transfers: 200,
  doubleTransfers: 30,
  mints: 60,
  rowsPerMint: 3,
  hops: 3,
  zlibEvery: 50,
  abiEveryBlocks: 20,
  /** Blocks of asset ids before they are reused (rewritten), which bounds the state of a long-running devchain. */
  assetBlocks: 64,
  deferredDelaySec: 1,
} as const

export const NFT_ACCOUNT = nftdemo.name

/** Pushes one transaction into the pending block; the workload's wrapper logs a failure and goes on. */
export type PushTrusted = (trx: DecodedTransaction) => void

const SELF_ACTIVE = [{ actor: NFT_ACCOUNT, permission: 'active' }]

function systemAction(chain: Chain, name: string, authorization: RawAction['authorization'], data: unknown) {
  const encoded = Serializer.encode({ abi: chain.systemContract.abi, type: name, object: data as never }).array
  return { account: 'eosio', name, authorization, data: encoded }
}

function setAbiAction(chain: Chain, generation: NftGeneration): RawAction {
  const abi = toHex(encodeAbiBinary(ABI.from(NFTDEMO_ABIS[generation])))
  return systemAction(chain, 'setabi', SELF_ACTIVE, { account: NFT_ACCOUNT, abi })
}

/** The nftdemo account, its code and ABI (generation 1), and nftdemo@eosio.code in its active permission. */
function setupActions(chain: Chain): RawAction[] {
  const active = {
    ...keyAuthority(),
    accounts: [{ permission: { actor: NFT_ACCOUNT, permission: 'eosio.code' }, weight: 1 }],
  }
  return [
    systemAction(chain, 'newaccount', [{ actor: 'eosio', permission: 'active' }], {
      creator: 'eosio',
      name: NFT_ACCOUNT,
      owner: keyAuthority(),
      active: keyAuthority(),
    }),
    systemAction(chain, 'setcode', SELF_ACTIVE, {
      account: NFT_ACCOUNT,
      vmtype: 0,
      vmversion: 0,
      code: toHex(nftdemo.markerCode),
    }),
    setAbiAction(chain, 1),
    systemAction(chain, 'updateauth', SELF_ACTIVE, {
      account: NFT_ACCOUNT,
      permission: 'active',
      parent: 'owner',
      auth: active,
    }),
  ]
}

/** A row of 200 to 400 bytes of metadata-like text. */
function assetRow(assetId: bigint): Uint8Array {
  const length = 200 + Number((assetId * 37n) % 201n)
  const text = `{"name":"dense asset ${assetId}","img":"QmDenseImage${assetId}","rarity":"${assetId % 7n}"} `
  return new Uint8Array(Buffer.from(text.repeat(Math.ceil(length / text.length)).slice(0, length), 'utf8'))
}

function mintAction(blockNum: number, mint: number, generation: NftGeneration): RawAction {
  const { mints, rowsPerMint, assetBlocks, hops } = DENSE_MIX
  const firstAssetId = BigInt(((blockNum % assetBlocks) * mints + mint) * rowsPerMint)
  const rows = Array.from({ length: rowsPerMint }, (_, i) => assetRow(firstAssetId + BigInt(i)))
  const owner = GENESIS_USERS[(blockNum + mint) % GENESIS_USERS.length]
  const data = encodeMint({ minter: NFT_ACCOUNT, owner, templateId: mint, firstAssetId, rows, hops }, generation)
  return { account: NFT_ACCOUNT, name: 'mint', authorization: SELF_ACTIVE, data }
}

/** Transfer `n` of the block: pairs go both ways with the same amount (0.0001 to 1.0000 EOS). */
function pairedTransfer(blockNum: number, n: number): RawAction {
  const pair = n >> 1
  const a = GENESIS_USERS[(blockNum + pair) % 3]
  const b = GENESIS_USERS[(blockNum + pair + 1) % 3]
  const units = BigInt(1 + ((blockNum * 7919 + pair * 104_729) % 10_000))
  return n % 2 === 0
    ? transferAction(a, b, units, `dense ${blockNum}:${n}`)
    : transferAction(b, a, units, `dense ${blockNum}:${n}`)
}

/** The input transactions of a block after the setup and ABI change: transfers, mints, doubles, deferred. */
function blockActions(blockNum: number, generation: NftGeneration): { actions: RawAction[]; delaySec: number }[] {
  const { transfers, doubleTransfers, mints, deferredDelaySec } = DENSE_MIX
  const out: { actions: RawAction[]; delaySec: number }[] = []
  let transfer = 0
  let double = 0
  let mint = 0
  const pushTransfer = () => out.push({ actions: [pairedTransfer(blockNum, transfer++)], delaySec: 0 })
  const pushMint = () => out.push({ actions: [mintAction(blockNum, mint++, generation)], delaySec: 0 })
  const pushDouble = () => {
    const n = transfers + 2 * double++
    out.push({ actions: [pairedTransfer(blockNum, n), pairedTransfer(blockNum, n + 1)], delaySec: 0 })
  }
  for (let i = 0; i < transfers + doubleTransfers + mints; i++) {
    // Interleaved as in a busy block: a mint in every five transactions, a double transfer in every eight.
    const singlesLeft = transfer < transfers
    if (mint < mints && (i % 5 === 2 || (!singlesLeft && double >= doubleTransfers))) pushMint()
    else if (double < doubleTransfers && (i % 8 === 7 || !singlesLeft)) pushDouble()
    else pushTransfer()
  }
  const [from, to, other] = [0, 1, 2].map((k) => GENESIS_USERS[(blockNum + k) % 3])
  out.push({ actions: [transferAction(from, to, 1n, `dense deferred ${blockNum}`)], delaySec: deferredDelaySec })
  // More than any user holds: the scheduled run fails (overdrawn balance), a hard_fail receipt.
  const overdraw = transferAction(other, from, 10_000_000_000n, `dense deferred overdraw ${blockNum}`)
  out.push({ actions: [overdraw], delaySec: deferredDelaySec })
  return out
}

/**
 * Pushes the dense profile's transactions of the next block (head + 1) into the pending block: the setup when
 * nftdemo does not exist yet, the ABI change when due, then the block's mix. Transaction ids are unique per block
 * number. Returns the number of input actions pushed.
 */
export function pushDenseBlock(chain: Chain, push: PushTrusted, nowMs = 0): number {
  const blockNum = chain.head.num + 1
  let index = 0
  let actions = 0
  const send = (list: readonly RawAction[], delaySec = 0) => {
    const header: TrustedHeader = {
      ...trustedHeaderFor(chain, ((blockNum * 1000 + index) % 2 ** 32) >>> 0, nowMs),
      delaySec,
      zlib: index % DENSE_MIX.zlibEvery === DENSE_MIX.zlibEvery - 1,
    }
    index++
    actions += list.length
    push(trustedTransaction(header, list))
  }
  if (!chain.state.has('account', NFT_ACCOUNT)) send(setupActions(chain))
  else if (blockNum % DENSE_MIX.abiEveryBlocks === 0)
    send([setAbiAction(chain, nftGenerationOf(chain.state, NFT_ACCOUNT) === 1 ? 2 : 1)])
  const generation = nftGenerationOf(chain.state, NFT_ACCOUNT)
  for (const trx of blockActions(blockNum, generation)) send(trx.actions, trx.delaySec)
  return actions
}
