import { AbiCache, type CompiledAbi } from '../antelope/index.ts'
import type { Store } from '../store/index.ts'
import type { ActionDataDecoder } from './action-traces.ts'

/** Where decoders come from: each holds the ABIs in force at one block of the accounts it was prepared for. */
export type DecoderSource = (
  blockNum: number,
  accounts: Iterable<string>,
) => Promise<ActionDataDecoder & { readonly abiOf: (account: string) => CompiledAbi | undefined }>

/** A decoder of action data with these ABIs (undefined when an account has none, or decoding fails). */
function decoderWith(
  abiOf: (account: string) => CompiledAbi | undefined,
): ActionDataDecoder & { readonly abiOf: (account: string) => CompiledAbi | undefined } {
  const decode: ActionDataDecoder = (account, name, data) => {
    const abi = abiOf(account)
    const type = abi?.actionType(name)
    const decoded = abi && type ? abi.decode(type, data) : undefined
    return decoded?.ok ? decoded.value : undefined
  }
  return Object.assign(decode, { abiOf })
}

/**
 * Decoders of action data (and table rows, through `abiOf`) with the ABIs of a height, compiled once per distinct ABI.
 */
export function createDecoderSource(store: Pick<Store, 'abi'>, cacheSize = 256): DecoderSource {
  const abis = new AbiCache(cacheSize)
  return async (blockNum, accounts) => {
    const compiled = new Map<string, CompiledAbi | undefined>()
    for (const account of accounts) {
      if (compiled.has(account)) continue
      const stored = await store.abi({ account, blockNum })
      const result = stored ? abis.fromBinary(stored.abi) : undefined
      compiled.set(account, result?.ok ? result.value : undefined)
    }
    return decoderWith((account) => compiled.get(account))
  }
}

/** Decoders for the blocks of a page, each with the ABIs of its accounts at that block (`abiOf` for row types). */
export type BlockDecoderSource = (
  blocks: ReadonlyMap<number, ReadonlySet<string>>,
) => Promise<Map<number, ActionDataDecoder & { readonly abiOf: (account: string) => CompiledAbi | undefined }>>

/**
 * Decoders for many blocks at once: every (account, block) ABI in one batch read (`abisAt`), each distinct ABI
 * compiled once. What a search page's results use instead of one `abi` read per account and block.
 */
export function createBlockDecoderSource(store: Pick<Store, 'abisAt'>, cacheSize = 256): BlockDecoderSource {
  const abis = new AbiCache(cacheSize)
  return async (blocks) => {
    const requests = [...blocks].flatMap(([blockNum, accounts]) =>
      [...accounts].map((account) => ({ account, blockNum })),
    )
    const answers = await store.abisAt(requests)
    const compiled = new Map<string, CompiledAbi | undefined>()
    requests.forEach((r, i) => {
      const result = answers[i] ? abis.fromBinary(answers[i].abi) : undefined
      compiled.set(`${r.account}:${r.blockNum}`, result?.ok ? result.value : undefined)
    })
    const out = new Map<number, ActionDataDecoder & { readonly abiOf: (account: string) => CompiledAbi | undefined }>()
    for (const blockNum of blocks.keys()) {
      out.set(
        blockNum,
        decoderWith((account) => compiled.get(`${account}:${blockNum}`)),
      )
    }
    return out
  }
}
