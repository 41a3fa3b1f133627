/**
 * The token of an `Authorization` value, the one Bearer rule of every transport (an HTTP header, a WebSocket
 * upgrade's or `connection_init`'s, gRPC metadata): `Bearer <token>` or the bare token. More than one value,
 * a value that is not text, or text of another shape (three words, another scheme) is `'malformed'` (admission
 * refuses it); no value or an empty one is undefined (no token).
 */
export function authorizationToken(values: readonly unknown[]): string | undefined {
  if (values.length === 0) return undefined
  if (values.length > 1 || typeof values[0] !== 'string') return 'malformed'
  const words = values[0].trim().split(/\s+/)
  // A lone `Bearer` names the scheme without its token.
  if (words.length === 1)
    return words[0] === '' ? undefined : words[0].toLowerCase() === 'bearer' ? 'malformed' : words[0]
  return words.length === 2 && words[0].toLowerCase() === 'bearer' ? words[1] : 'malformed'
}
