import { Serializer, Signature, Transaction } from '@wharfkit/antelope'
import { fromHex } from './hash.ts'

/** A packed signature (type byte first, hex) in its text form (`SIG_K1_…`); undefined when malformed. */
export function signatureText(hex: string): string | undefined {
  try {
    return Serializer.decode({ data: fromHex(hex), type: Signature }).toString()
  } catch {
    return undefined
  }
}

/** A packed transaction's fields as nodeos renders them (action data stays hex); undefined when malformed. */
export interface UnpackedTransaction {
  readonly expiration: string
  readonly ref_block_num: number
  readonly ref_block_prefix: number
  readonly max_net_usage_words: number
  readonly max_cpu_usage_ms: number
  readonly delay_sec: number
  readonly context_free_actions: readonly UnpackedAction[]
  readonly actions: readonly UnpackedAction[]
  readonly transaction_extensions: readonly { readonly type: number; readonly data: string }[]
}

export interface UnpackedAction {
  readonly account: string
  readonly name: string
  readonly authorization: readonly { readonly actor: string; readonly permission: string }[]
  readonly data: string
}

export function unpackTransaction(hex: string): UnpackedTransaction | undefined {
  try {
    return JSON.parse(
      JSON.stringify(Serializer.decode({ data: fromHex(hex), type: Transaction })),
    ) as UnpackedTransaction
  } catch {
    return undefined
  }
}
