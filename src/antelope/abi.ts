import { ABI, ABIDecoder, Serializer } from '@wharfkit/antelope'

/** Either the decoded value or why decoding failed; decoders never throw into callers. */
export type DecodeResult<T = unknown> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string }

/** Decodes ABI-typed binary data into plain JSON values (integers over 32 bits as strings). */
export interface AbiDecoder {
  decode(args: { abi: ABI; type: string; data: Uint8Array }): DecodeResult
}

/**
 * The reference decoder, on wharfkit's Serializer. Invalid UTF-8 in strings is tolerated, as on
 * mainnet; bytes left over after the value are an error (wharfkit alone would ignore them).
 */
export function createWharfkitDecoder(): AbiDecoder {
  return {
    decode({ abi, type, data }) {
      try {
        const reader = new ABIDecoder(data, new TextDecoder('utf-8', { fatal: false }))
        const decoded = Serializer.decode({ abi, type, data: reader, ignoreInvalidUTF8: true })
        if (reader.canRead())
          return { ok: false, error: `${data.length - reader.getPosition()} bytes left after decoding ${type}` }
        return { ok: true, value: Serializer.objectify(decoded) }
      } catch (error) {
        return { ok: false, error: error instanceof Error ? error.message : String(error) }
      }
    },
  }
}

/** Decodes a binary `abi_def` (as `setabi` and SHiP `account` rows carry it). */
export function decodeAbiBinary(data: Uint8Array): DecodeResult<ABI> {
  if (data.length === 0) return { ok: false, error: 'empty ABI' }
  try {
    return { ok: true, value: ABI.from(Serializer.decode({ data, type: ABI })) }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

/** Encodes an ABI to its binary `abi_def`. */
export function encodeAbiBinary(abi: ABI): Uint8Array {
  return Serializer.encode({ object: abi }).array
}

/** The action's data type in an ABI, or undefined when the ABI does not declare the action. */
export function actionType(abi: ABI, action: string): string | undefined {
  return abi.actions.find((a) => a.name.toString() === action)?.type
}

/** The row type of a table in an ABI, or undefined when the ABI does not declare the table. */
export function tableType(abi: ABI, table: string): string | undefined {
  return abi.tables.find((t) => t.name.toString() === table)?.type
}

/** An ABI as plain JSON (the `abi_def` fields), as `get_abi` and dfuse's `with_abi` show it. */
export function abiToJson(abi: ABI): unknown {
  return Serializer.objectify(abi)
}
