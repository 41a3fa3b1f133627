import { ABI, Action, PrivateKey, Serializer, Transaction } from '@wharfkit/antelope'
import { blockSlotToMs, refBlockPrefix, signingDigest, type BlockRef } from '../../antelope/index.ts'
import type { PackedTransactionInput } from './intake.ts'
import type { PermissionLevel } from './traces.ts'

/** An action to sign: data as an object (encoded with `abi`) or already packed. */
export interface ActionToSign {
  readonly account: string
  readonly name: string
  readonly authorization: readonly PermissionLevel[]
  readonly data: Record<string, unknown> | Uint8Array
}

/** Builds and signs a transaction referencing `ref` (TAPOS) and expiring `expireSeconds` after `refSlot`'s time. */
export function signTransaction(args: {
  chainId: string
  ref: BlockRef & { readonly slot: number }
  actions: readonly ActionToSign[]
  abiOf: (account: string) => ABI | undefined
  keys: readonly PrivateKey[]
  expireSeconds?: number
  delaySec?: number
  /** Salt for otherwise identical transactions (goes in max_net_usage_words, which nothing here limits). */
  nonce?: number
}): PackedTransactionInput {
  const actions = args.actions.map((a) =>
    a.data instanceof Uint8Array
      ? Action.from({ account: a.account, name: a.name, authorization: [...a.authorization], data: a.data })
      : Action.from(
          { account: a.account, name: a.name, authorization: [...a.authorization], data: a.data },
          args.abiOf(a.account),
        ),
  )
  const trx = Transaction.from({
    expiration: Math.floor(blockSlotToMs(args.ref.slot) / 1000) + (args.expireSeconds ?? 60),
    ref_block_num: args.ref.blockNum & 0xffff,
    ref_block_prefix: refBlockPrefix(args.ref.blockId),
    max_net_usage_words: args.nonce ?? 0,
    delay_sec: args.delaySec ?? 0,
    actions,
  })
  const packedTrx = Serializer.encode({ object: trx }).array
  const digest = signingDigest(args.chainId, packedTrx, new Uint8Array(0))
  return {
    signatures: args.keys.map((k) => k.signDigest(digest).toString()),
    compression: 0,
    packedContextFreeData: new Uint8Array(0),
    packedTrx,
  }
}
