import { BinaryWriter, nameToBigInt, type RawAction } from '../antelope/index.ts'

/** An `eosio.token::transfer` of `units` (0.0001 EOS each), binary-encoded, authorized by `from`. */
export function transferAction(from: string, to: string, units: bigint, memo: string): RawAction {
  const w = new BinaryWriter(64).uint64(nameToBigInt(from)).uint64(nameToBigInt(to))
  return {
    account: 'eosio.token',
    name: 'transfer',
    authorization: [{ actor: from, permission: 'active' }],
    data: w.int64(units).uint64(0x534f4504n).string(memo).finish(), // symbol 4,EOS
  }
}

/** A `rawdb::put` of `value` at `key` of table `rows` in `scope`, paid by rawdb. */
export function rawdbPutAction(scope: string, key: bigint, value: Uint8Array): RawAction {
  const w = new BinaryWriter(64 + value.length).uint64(nameToBigInt(scope)).uint64(nameToBigInt('rows'))
  return {
    account: 'rawdb',
    name: 'put',
    authorization: [{ actor: 'rawdb', permission: 'active' }],
    data: w.uint64(key).uint64(nameToBigInt('rawdb')).bytes(value).finish(),
  }
}
