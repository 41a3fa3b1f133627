import { AbiCache, type CompiledAbi } from '../antelope/index.ts'
import type { Store } from '../store/index.ts'
import type { ActionDataDecoder } from './action-traces.ts'

/** Where decoders come from: each holds the ABIs in force at one block of the accounts it was prepared for. */
export type DecoderSource = (
  blockNum: number,
  accounts: Iterable<string>,
) => Promise<ActionDataDecoder & { readonly abiOf: (account: string) => CompiledAbi | undefined }>

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
    const decode: ActionDataDecoder = (account, name, data) => {
      const abi = compiled.get(account)
      const type = abi?.actionType(name)
      const decoded = abi && type ? abi.decode(type, data) : undefined
      return decoded?.ok ? decoded.value : undefined
    }
    return Object.assign(decode, { abiOf: (account: string) => compiled.get(account) })
  }
}
