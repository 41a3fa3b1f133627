import { BinaryWriter } from './binary.ts'
import { sha256, toHex } from './hash.ts'
import { nameToBigInt } from './names.ts'

/** An action in its wire form: names as strings, data as bytes. */
export interface RawAction {
  readonly account: string
  readonly name: string
  readonly authorization: readonly { readonly actor: string; readonly permission: string }[]
  readonly data: Uint8Array
}

function packActionHeader(w: BinaryWriter, action: RawAction): BinaryWriter {
  w.uint64(nameToBigInt(action.account)).uint64(nameToBigInt(action.name)).varuint32(action.authorization.length)
  for (const level of action.authorization) w.uint64(nameToBigInt(level.actor)).uint64(nameToBigInt(level.permission))
  return w
}

/** The packed `action` struct (account, name, authorization, data as bytes). */
export function packAction(action: RawAction): Uint8Array {
  return packActionHeader(new BinaryWriter(64 + action.data.length), action)
    .bytes(action.data)
    .finish()
}

/**
 * A receipt's `act_digest`. With ACTION_RETURN_VALUE active (every current chain):
 * sha256(sha256(account, name, authorization) ‖ sha256(data as bytes ‖ return value as bytes)).
 * Before it (`legacy`): sha256 of the packed action.
 */
export function actionDigest(action: RawAction, returnValue: Uint8Array, legacy = false): string {
  if (legacy) return toHex(sha256(packAction(action)))
  const header = sha256(packActionHeader(new BinaryWriter(64), action).finish())
  const payload = sha256(
    new BinaryWriter(16 + action.data.length + returnValue.length).bytes(action.data).bytes(returnValue).finish(),
  )
  return toHex(sha256(header, payload))
}
