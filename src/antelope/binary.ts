import { AntlerError } from './errors.ts'

/** Bytes ended before a value was complete, or a value is out of its type's range. */
export function BinaryDecodeError(message: string, offset: number): AntlerError {
  return new AntlerError('binary_decode_error', { reason: message, offset })
}

/** Appends Antelope binary encodings (little-endian integers, varuint32, length-prefixed bytes). */
export class BinaryWriter {
  private buffer: Uint8Array
  private view: DataView
  private length = 0

  constructor(initialCapacity = 256) {
    this.buffer = new Uint8Array(initialCapacity)
    this.view = new DataView(this.buffer.buffer)
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return
    let capacity = this.buffer.length * 2
    while (capacity < this.length + extra) capacity *= 2
    const next = new Uint8Array(capacity)
    next.set(this.buffer.subarray(0, this.length))
    this.buffer = next
    this.view = new DataView(next.buffer)
  }

  uint8(value: number): this {
    this.reserve(1)
    this.buffer[this.length++] = value
    return this
  }

  bool(value: boolean): this {
    return this.uint8(value ? 1 : 0)
  }

  uint16(value: number): this {
    this.reserve(2)
    this.view.setUint16(this.length, value, true)
    this.length += 2
    return this
  }

  uint32(value: number): this {
    this.reserve(4)
    this.view.setUint32(this.length, value, true)
    this.length += 4
    return this
  }

  uint64(value: bigint): this {
    this.reserve(8)
    this.view.setBigUint64(this.length, value, true)
    this.length += 8
    return this
  }

  int64(value: bigint): this {
    this.reserve(8)
    this.view.setBigInt64(this.length, value, true)
    this.length += 8
    return this
  }

  varuint32(value: number): this {
    this.reserve(5)
    let v = value >>> 0
    do {
      let byte = v & 0x7f
      v >>>= 7
      if (v) byte |= 0x80
      this.buffer[this.length++] = byte
    } while (v)
    return this
  }

  /** Raw bytes, no length prefix. */
  raw(bytes: Uint8Array): this {
    this.reserve(bytes.length)
    this.buffer.set(bytes, this.length)
    this.length += bytes.length
    return this
  }

  /** `bytes`: varuint32 length, then the bytes. */
  bytes(bytes: Uint8Array): this {
    return this.varuint32(bytes.length).raw(bytes)
  }

  string(text: string): this {
    return this.bytes(Buffer.from(text, 'utf8'))
  }

  /** A copy of what was written. */
  finish(): Uint8Array {
    return this.buffer.slice(0, this.length)
  }
}

/** Reads Antelope binary encodings; every read checks bounds and throws `binary_decode_error`. */
export class BinaryReader {
  private readonly view: DataView
  offset = 0

  constructor(private readonly data: Uint8Array) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  }

  get remaining(): number {
    return this.data.length - this.offset
  }

  private need(n: number): void {
    if (this.offset + n > this.data.length)
      throw BinaryDecodeError(`need ${n} more bytes, have ${this.remaining}`, this.offset)
  }

  uint8(): number {
    this.need(1)
    return this.data[this.offset++]
  }

  bool(): boolean {
    const value = this.uint8()
    if (value > 1) throw BinaryDecodeError(`bool must be 0 or 1, got ${value}`, this.offset - 1)
    return value === 1
  }

  uint16(): number {
    this.need(2)
    const value = this.view.getUint16(this.offset, true)
    this.offset += 2
    return value
  }

  uint32(): number {
    this.need(4)
    const value = this.view.getUint32(this.offset, true)
    this.offset += 4
    return value
  }

  uint64(): bigint {
    this.need(8)
    const value = this.view.getBigUint64(this.offset, true)
    this.offset += 8
    return value
  }

  varuint32(): number {
    let value = 0
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.uint8()
      value += (byte & 0x7f) * 2 ** shift
      if (!(byte & 0x80)) {
        if (value > 0xffffffff) throw BinaryDecodeError('varuint32 out of range', this.offset)
        return value
      }
    }
    throw BinaryDecodeError('varuint32 longer than 5 bytes', this.offset)
  }

  /** `n` raw bytes, as a view into the input (no copy). */
  raw(n: number): Uint8Array {
    this.need(n)
    const out = this.data.subarray(this.offset, this.offset + n)
    this.offset += n
    return out
  }

  /** `bytes`: varuint32 length, then the bytes, as a view into the input (no copy). */
  bytes(): Uint8Array {
    return this.raw(this.varuint32())
  }

  string(): string {
    return Buffer.from(this.bytes()).toString('utf8')
  }

  /** The bytes from `start` to the current offset, as a view (no copy). */
  slice(start: number): Uint8Array {
    return this.data.subarray(start, this.offset)
  }

  /** Fails unless every byte was read: trailing bytes mean the sender and reader disagree. */
  end(): void {
    if (this.remaining !== 0) throw BinaryDecodeError(`${this.remaining} unexpected trailing bytes`, this.offset)
  }
}
