import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { AntlerError } from '../../src/antelope/index.ts'
import { createCursorCodec } from '../../src/search/index.ts'

const refusedAsInvalid = (error: unknown) =>
  error instanceof AntlerError &&
  error.code === 'request_validation_error' &&
  error.status === 400 &&
  'cursor' in (error.details.errors as object)

test('a cursor is opaque URL-safe text that decodes to its position, and only with the key that made it', () => {
  const codec = createCursorCodec(randomBytes(32))
  const position = { blockNum: 4_294_967_295, blockId: 'ff'.repeat(32), seq: Number.MAX_SAFE_INTEGER }
  for (const p of [
    position,
    { blockNum: 1, blockId: '00'.repeat(32), seq: 0 },
    { blockNum: 123_456, blockId: randomBytes(32).toString('hex'), seq: 987_654_321 },
  ]) {
    const cursor = codec.encode(p)
    assert.match(cursor, /^[A-Za-z0-9_-]+$/)
    assert.ok(!cursor.includes(String(p.blockNum)) || p.blockNum < 10, 'the position is not readable in clear decimal')
    assert.deepEqual(codec.decode(cursor), p)
  }
  const other = createCursorCodec(randomBytes(32))
  assert.throws(() => other.decode(codec.encode(position)), refusedAsInvalid, "another server's cursor")
})

test('every altered character, truncation, extension and garbage is a request_validation_error naming cursor', () => {
  const codec = createCursorCodec(randomBytes(32))
  const cursor = codec.encode({ blockNum: 42, blockId: 'ab'.repeat(32), seq: 1234 })
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  for (let i = 0; i < cursor.length; i++) {
    const swapped = alphabet[(alphabet.indexOf(cursor[i]) + 1) % alphabet.length]
    const altered = cursor.slice(0, i) + swapped + cursor.slice(i + 1)
    // The last character carries 2 padding bits in base64url: some swaps there decode to the same bytes.
    if (Buffer.from(altered, 'base64url').equals(Buffer.from(cursor, 'base64url'))) continue
    assert.throws(() => codec.decode(altered), refusedAsInvalid, `character ${i} altered`)
  }
  for (const garbage of [
    '',
    'x',
    cursor.slice(0, -1),
    `${cursor}A`,
    `${cursor.slice(0, -2)}==`,
    cursor.replace(/./, '+'),
    '💥'.repeat(41),
    ' '.repeat(cursor.length),
  ]) {
    assert.throws(() => codec.decode(garbage), refusedAsInvalid, JSON.stringify(garbage))
  }
})

test("a subscription's cursor (version 2) carries its step, survives a round trip, and refuses alteration", () => {
  const codec = createCursorCodec(randomBytes(32))
  const base = { blockNum: 77, blockId: 'cd'.repeat(32), seq: 5000 }
  for (const step of [
    { seq: 1, undo: false },
    { seq: Number.MAX_SAFE_INTEGER, undo: true },
  ]) {
    const cursor = codec.encode({ ...base, step })
    assert.notEqual(cursor.length, codec.encode(base).length)
    assert.deepEqual(codec.decode(cursor), { ...base, step })
    for (let i = 0; i < cursor.length - 1; i++) {
      const altered = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1)
      assert.throws(() => codec.decode(altered), refusedAsInvalid, `character ${i} altered`)
    }
  }
  // A version-1 cursor decodes without a step: searches and subscriptions accept both.
  assert.equal(codec.decode(codec.encode(base)).step, undefined)
})
