import { PublicKey } from '@wharfkit/antelope'

/**
 * A public key in the form the store keeps (`PUB_K1_…`, as SHiP rows are rendered), from any form
 * a client may send (legacy `EOS…`, `PUB_K1_…`, `PUB_R1_…`, `PUB_WA_…`); undefined when it is not a key.
 */
export function canonicalPublicKey(text: string): string | undefined {
  if (text.length > 256) return undefined
  try {
    return PublicKey.from(text).toString()
  } catch {
    return undefined
  }
}
