import { BinaryReader, BinaryWriter, bigIntToName, nameToBigInt } from '../../antelope/index.ts'
import type { ApplyContext } from '../chain/apply-context.ts'
import type { StateDb } from '../state/state-db.ts'
import { chainErrors, check } from '../errors.ts'
import { defineAbi, defineNativeContract, type AbiFields } from './native.ts'

/**
 * nftdemo: an NFT-like contract for the dense workload (src/devchain/dense-profile.ts), on the model of the big NFT
 * contracts of mainnets. `mint` writes several asset rows of a few hundred bytes in the owner's scope and bumps the
 * collection's stats row, notifies the owner and starts a chain of inline `log` actions (each notifying the owner
 * again) `hops` levels deep. The contract has two ABI generations with different layouts (generation 2 adds a
 * `template_id` to `mint` and to the asset row): each `setabi` switches to the other one (odd ABI sequence:
 * generation 1, even: 2), and the contract reads and writes the layout of the generation in force, as an upgraded
 * contract would, so a decoder must use the ABI of each block.
 */

export type NftGeneration = 1 | 2

const withTemplate = (fields: AbiFields, generation: NftGeneration, after: string): AbiFields =>
  generation === 1
    ? fields
    : fields.flatMap((field) => (field[0] === after ? [field, ['template_id', 'int32'] as const] : [field]))

function nftAbi(generation: NftGeneration) {
  return defineAbi({
    structs: {
      mint: withTemplate(
        [
          ['minter', 'name'],
          ['owner', 'name'],
          ['first_asset_id', 'uint64'],
          ['rows', 'bytes[]'],
          ['hops', 'uint8'],
        ],
        generation,
        'owner',
      ),
      log: [
        ['owner', 'name'],
        ['first_asset_id', 'uint64'],
        ['hops', 'uint8'],
      ],
      asset: withTemplate(
        [
          ['asset_id', 'uint64'],
          ['minter', 'name'],
          ['data', 'bytes'],
        ],
        generation,
        'minter',
      ),
      stats: [['minted', 'uint64']],
    },
    actions: ['mint', 'log'],
    tables: { assets: 'asset', stats: 'stats' },
  })
}

export const NFTDEMO_ABIS = { 1: nftAbi(1), 2: nftAbi(2) } as const

/** The ABI generation in force for `account`: by its ABI sequence's parity (generation 1 before any setabi). */
export function nftGenerationOf(state: StateDb, account: string): NftGeneration {
  const sequence = state.get('_account_sequence', account)?.abiSequence ?? 0
  return sequence > 0 && sequence % 2 === 0 ? 2 : 1
}

export interface NftMint {
  readonly minter: string
  readonly owner: string
  /** Generation 2 only. */
  readonly templateId: number
  readonly firstAssetId: bigint
  readonly rows: readonly Uint8Array[]
  readonly hops: number
}

/** `mint` action data in the layout of `generation`. */
export function encodeMint(m: NftMint, generation: NftGeneration): Uint8Array {
  const w = new BinaryWriter(64 + m.rows.reduce((sum, row) => sum + row.length + 3, 0))
  w.uint64(nameToBigInt(m.minter)).uint64(nameToBigInt(m.owner))
  if (generation === 2) w.uint32(m.templateId >>> 0)
  w.uint64(m.firstAssetId).varuint32(m.rows.length)
  for (const row of m.rows) w.bytes(row)
  return w.uint8(m.hops).finish()
}

function decodeMint(data: Uint8Array, generation: NftGeneration): NftMint {
  const r = new BinaryReader(data)
  const minter = bigIntToName(r.uint64())
  const owner = bigIntToName(r.uint64())
  const templateId = generation === 2 ? r.uint32() | 0 : 0
  const firstAssetId = r.uint64()
  const rows: Uint8Array[] = []
  for (let n = r.varuint32(); n > 0; n--) rows.push(r.bytes())
  const hops = r.uint8()
  r.end()
  return { minter, owner, templateId, firstAssetId, rows, hops }
}

function encodeLog(owner: string, firstAssetId: bigint, hops: number): Uint8Array {
  return new BinaryWriter(24).uint64(nameToBigInt(owner)).uint64(firstAssetId).uint8(hops).finish()
}

function decodeLog(data: Uint8Array): { owner: string; firstAssetId: bigint; hops: number } {
  const r = new BinaryReader(data)
  const out = { owner: bigIntToName(r.uint64()), firstAssetId: r.uint64(), hops: r.uint8() }
  r.end()
  return out
}

/** Action data read with a hand-written decoder (hundreds of mints a block); malformed data fails as nodeos's. */
function unpack<T>(ctx: ApplyContext, read: () => T): T {
  try {
    return read()
  } catch (error) {
    throw chainErrors.unpack(`unable to unpack action data of ${ctx.act.account}::${ctx.act.name}: ${error}`)
  }
}

const MAX_ROWS_PER_MINT = 16
const STATS_KEY = 0n

function mint(ctx: ApplyContext, self: string): void {
  const generation = nftGenerationOf(ctx.state, self)
  const m = unpack(ctx, () => decodeMint(ctx.act.data, generation))
  ctx.requireAuth(m.minter)
  check(ctx.isAccount(m.owner), 'owner account does not exist')
  check(m.rows.length > 0 && m.rows.length <= MAX_ROWS_PER_MINT, `a mint writes 1 to ${MAX_ROWS_PER_MINT} rows`)
  m.rows.forEach((data, i) => {
    const assetId = m.firstAssetId + BigInt(i)
    const w = new BinaryWriter(32 + data.length).uint64(assetId).uint64(nameToBigInt(m.minter))
    if (generation === 2) w.uint32(m.templateId >>> 0)
    const value = w.bytes(data).finish()
    // Asset ids are reused in a bounded range (a long-running devchain's state stays small): a reused one is rewritten.
    if (ctx.db.find(m.owner, 'assets', assetId)) ctx.db.update(m.owner, 'assets', assetId, self, value)
    else ctx.db.store(m.owner, 'assets', self, assetId, value)
  })
  const stats = ctx.db.find(self, 'stats', STATS_KEY)
  const minted = (stats ? new BinaryReader(stats.value).uint64() : 0n) + BigInt(m.rows.length)
  const statsValue = new BinaryWriter(8).uint64(minted).finish()
  if (stats) ctx.db.update(self, 'stats', STATS_KEY, self, statsValue)
  else ctx.db.store(self, 'stats', self, STATS_KEY, statsValue)
  ctx.requireRecipient(m.owner)
  if (m.hops > 0) sendLog(ctx, self, m.owner, m.firstAssetId, m.hops - 1)
}

function sendLog(ctx: ApplyContext, self: string, owner: string, firstAssetId: bigint, hops: number): void {
  ctx.sendInline({
    account: self,
    name: 'log',
    authorization: [{ actor: self, permission: 'active' }],
    data: encodeLog(owner, firstAssetId, hops),
  })
}

function apply(ctx: ApplyContext): void {
  if (ctx.receiver !== ctx.act.account) return // the owner's notifications: no handler, as on a plain account
  const self = ctx.receiver
  switch (ctx.act.name) {
    case 'mint':
      return mint(ctx, self)
    case 'log': {
      const a = unpack(ctx, () => decodeLog(ctx.act.data))
      ctx.requireAuth(self)
      ctx.requireRecipient(a.owner)
      if (a.hops > 0) sendLog(ctx, self, a.owner, a.firstAssetId, a.hops - 1)
      return
    }
    default:
      check(false, `unknown action ${ctx.act.name} on ${self}`)
  }
}

export const nftdemo = defineNativeContract({ name: 'nftdemo', abi: NFTDEMO_ABIS[1], apply })
