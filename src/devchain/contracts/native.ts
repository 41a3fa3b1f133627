import { ABI } from '@wharfkit/antelope'
import { sha256, toHex } from '../../antelope/index.ts'
import type { ApplyContext, NativeContract } from '../chain/apply-context.ts'

/**
 * Declares a native contract. Its marker code is what `setcode` must carry to attach it to an
 * account (as chains share one token contract's code hash); the hash identifies it in state.
 */
export function defineNativeContract(args: { name: string; abi: ABI.Def; apply: (ctx: ApplyContext) => void }): NativeContract {
  const markerCode = new Uint8Array(Buffer.from(`antler-devchain-native-contract:${args.name}`, 'utf8'))
  return { name: args.name, markerCode, codeHash: toHex(sha256(markerCode)), abi: ABI.from(args.abi), apply: args.apply }
}
