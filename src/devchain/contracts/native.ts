import { ABI } from '@wharfkit/antelope'
import { sha256, toHex } from '../../antelope/index.ts'
import type { ApplyContext, NativeContract } from '../chain/apply-context.ts'

/** Fields as `[name, type]` pairs, in wire order. */
export type AbiFields = readonly (readonly [string, string])[]

/**
 * An `eosio::abi/1.2` definition from compact parts: each struct's fields, the actions (each of the
 * struct type of its name) and the tables with their row types.
 */
export function defineAbi(args: {
  structs: Record<string, AbiFields>
  actions: readonly string[]
  tables?: Record<string, string>
}): ABI.Def {
  return {
    version: 'eosio::abi/1.2',
    types: [],
    structs: Object.entries(args.structs).map(([name, fields]) => ({
      name,
      base: '',
      fields: fields.map(([field, type]) => ({ name: field, type })),
    })),
    actions: args.actions.map((name) => ({ name, type: name, ricardian_contract: '' })),
    tables: Object.entries(args.tables ?? {}).map(([name, type]) => ({
      name,
      index_type: 'i64',
      key_names: [],
      key_types: [],
      type,
    })),
    ricardian_clauses: [],
    variants: [],
    action_results: [],
  }
}

/**
 * Declares a native contract. Its marker code is what `setcode` must carry to attach it to an
 * account (as chains share one token contract's code hash); the hash identifies it in state.
 */
export function defineNativeContract(args: {
  name: string
  abi: ABI.Def
  apply: (ctx: ApplyContext) => void
}): NativeContract {
  const markerCode = new Uint8Array(Buffer.from(`antler-devchain-native-contract:${args.name}`, 'utf8'))
  return {
    name: args.name,
    markerCode,
    codeHash: toHex(sha256(markerCode)),
    abi: ABI.from(args.abi),
    apply: args.apply,
  }
}
