import { sha256 } from './hash.ts'

const ZERO_DIGEST = new Uint8Array(32)

/**
 * nodeos's legacy (pre-Savanna) merkle root: pairs hashed level by level, the left node with the
 * top bit of its first byte cleared and the right node with it set; an odd level repeats its last.
 */
export function legacyMerkleRoot(digests: readonly Uint8Array[]): Uint8Array {
  if (digests.length === 0) return ZERO_DIGEST
  let level = digests.slice()
  while (level.length > 1) {
    if (level.length % 2) level.push(level[level.length - 1])
    const next: Uint8Array[] = []
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i].slice()
      const right = level[i + 1].slice()
      left[0] &= 0x7f
      right[0] |= 0x80
      next.push(sha256(left, right))
    }
    level = next
  }
  return level[0]
}
