import { readFileSync } from 'node:fs'
import { ABI, Serializer } from '@wharfkit/antelope'

/**
 * The SHiP protocol ABI exactly as nodeos (Spring 1.1+) sends it as the first text frame,
 * `tables` section included. Kept byte-for-byte: clients may hash or regex it.
 */
export const SHIP_ABI_TEXT: string = readFileSync(new URL('./ship-abi.json', import.meta.url), 'utf8')

/** The parsed SHiP ABI. */
export const SHIP_ABI: ABI = ABI.from(JSON.parse(SHIP_ABI_TEXT))

/** Encodes a plain JSON value as the named SHiP ABI type. */
export function encodeShipType(type: string, object: unknown): Uint8Array {
  return Serializer.encode({ abi: SHIP_ABI, type, object: object as never }).array
}

/**
 * Decodes the named SHiP ABI type into plain JSON (variants as `[name, value]`, integers over 32
 * bits as strings, checksums and bytes as lowercase hex). Throws on malformed bytes.
 */
export function decodeShipType<T = unknown>(type: string, data: Uint8Array): T {
  return Serializer.objectify(Serializer.decode({ abi: SHIP_ABI, type, data, ignoreInvalidUTF8: true })) as T
}
