import { promises as dns } from 'node:dns'
import { isIP } from 'node:net'
import { AntlerError } from '../antelope/index.ts'
import { isBlockedAddress, type AllowList } from './address-policy.ts'

/** Longest target URL a subscription may hold, characters. */
export const MAX_TARGET_URL_LENGTH = 2048

/** One address a name resolves to. */
export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Answers every address of a host name (tests inject their own). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), every address in the order it answers them. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true })
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

function refused(url: string, reason: string, extra?: { address?: string; cause?: unknown }): AntlerError {
  // A refused URL is echoed back in the error; an overlong one only in part.
  // Credentials in a refused URL are not echoed back.
  const masked = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@')
  const shown = masked.length > MAX_TARGET_URL_LENGTH ? `${masked.slice(0, 200)}…` : masked
  const args = extra?.address === undefined ? { url: shown, reason } : { url: shown, reason, address: extra.address }
  return new AntlerError('webhook_target_refused_error', args, { cause: extra?.cause })
}

/**
 * The syntactic check of a target URL: an absolute `http:` or `https:` URL with a host, no user name or password,
 * at most 2,048 characters (as given and once normalized). A fragment is stripped: it is never sent over HTTP, so
 * it cannot matter to the receiver. Throws `webhook_target_refused_error` with reason `too_long`, `malformed`,
 * `scheme` or `credentials`. Addresses are checked by `resolveTarget`.
 */
export function checkTargetUrl(url: string): URL {
  if (url.length > MAX_TARGET_URL_LENGTH) throw refused(url, 'too_long')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (error) {
    throw refused(url, 'malformed', { cause: error })
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw refused(url, 'scheme')
  if (parsed.username !== '' || parsed.password !== '') throw refused(url, 'credentials')
  // Port 0 parses but cannot be connected to.
  if (parsed.hostname === '' || parsed.port === '0') throw refused(url, 'malformed')
  parsed.hash = ''
  // The URL as stored and sent may be longer than as given (percent-encoding).
  if (parsed.href.length > MAX_TARGET_URL_LENGTH) throw refused(url, 'too_long')
  return parsed
}

/** A URL's host as an address or name: IPv6 literals lose their brackets. */
export function targetHost(url: URL): string {
  const host = url.hostname
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

/**
 * The address a delivery to `url` connects to: the host's addresses (an IP literal is its own and is not resolved),
 * every one of which must pass the address policy, since a name must not mix reachable and blocked addresses (a
 * connection could take any of them). Answers the first. Throws `webhook_target_refused_error` with reason `dns`
 * (the lookup failed or found nothing) or `blocked_ip` (with the address). Registration calls it after
 * `checkTargetUrl`; every delivery calls it again, since DNS answers change.
 */
export async function resolveTarget(url: URL, allow: AllowList, resolver: Resolver): Promise<ResolvedAddress> {
  const host = targetHost(url)
  let answers: readonly { address: string }[]
  if (isIP(host) !== 0) answers = [{ address: host }]
  else {
    try {
      answers = await resolver(host)
    } catch (error) {
      throw refused(url.href, 'dns', { cause: error })
    }
  }
  if (answers.length === 0) throw refused(url.href, 'dns')
  for (const { address } of answers) {
    if (isBlockedAddress(address, allow).blocked) throw refused(url.href, 'blocked_ip', { address })
  }
  const first = answers[0].address
  // The family follows from the address itself, whatever the resolver claimed.
  return { address: first, family: isIP(first) === 6 ? 6 : 4 }
}
