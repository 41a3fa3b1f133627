import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * The addresses an operator lets deliveries reach although the policy blocks them (`--webhook-allow-cidr`): e.g. a
 * receiver on the same host or the same private network. Built by `parseAllowCidrs`.
 */
export interface AllowList {
  /** How the operator wrote it: `none`, `loopback`, or a list of ranges (which may include `loopback`). */
  readonly kind: 'none' | 'loopback' | 'list'
  /** Canonical CIDRs (network address, prefix length); IPv4-mapped IPv6 ranges are stored as their IPv4 range. */
  readonly cidrs: readonly string[]
}

/** The verdict on one address. */
export interface AddressVerdict {
  readonly blocked: boolean
  /** When blocked: the range that blocks it, e.g. `127.0.0.0/8`. */
  readonly range?: string
  /** When blocked: what the range is, e.g. `loopback`, `private`, `cloud_metadata`. */
  readonly reason?: string
}

type Address = ipaddr.IPv4 | ipaddr.IPv6

interface NamedRange {
  readonly cidr: string
  readonly reason: string
  /** The CIDR parsed once (every delivery checks its address against every range). */
  readonly network: readonly [Address, number]
}

const named = (cidr: string, reason: string): NamedRange => ({ cidr, reason, network: ipaddr.parseCIDR(cidr) })

/** Instance metadata services (AWS, GCP, Azure, Oracle; AWS's IPv6; Alibaba): never reachable, allow list or not. */
const CLOUD_METADATA: readonly NamedRange[] = [
  named('169.254.169.254/32', 'cloud_metadata'),
  named('fd00:ec2::254/128', 'cloud_metadata'),
  named('100.100.100.200/32', 'cloud_metadata'),
]

/** IPv4 ranges that are not the public internet (IANA special-purpose registry). */
const BLOCKED_V4: readonly NamedRange[] = [
  named('0.0.0.0/8', 'unspecified'),
  named('10.0.0.0/8', 'private'),
  named('100.64.0.0/10', 'carrier_grade_nat'),
  named('127.0.0.0/8', 'loopback'),
  named('169.254.0.0/16', 'link_local'),
  named('172.16.0.0/12', 'private'),
  named('192.0.0.0/24', 'ietf_protocol'),
  named('192.0.2.0/24', 'documentation'),
  named('192.88.99.0/24', 'reserved'),
  named('192.168.0.0/16', 'private'),
  named('198.18.0.0/15', 'benchmarking'),
  named('198.51.100.0/24', 'documentation'),
  named('203.0.113.0/24', 'documentation'),
  named('224.0.0.0/4', 'multicast'),
  named('255.255.255.255/32', 'broadcast'),
  named('240.0.0.0/4', 'reserved'),
]

/**
 * IPv6 ranges that are not the public internet. The forms that embed an IPv4 address the receiver would reach
 * (mapped, compatible, translated, NAT64's well-known prefix) never get here: they are judged as that IPv4 address.
 * 6to4 and Teredo are refused whole: the IPv4 address they tunnel to is not the one a check could see.
 */
const BLOCKED_V6: readonly NamedRange[] = [
  named('::/128', 'unspecified'),
  named('::1/128', 'loopback'),
  named('64:ff9b:1::/48', 'nat64_local'),
  named('100::/64', 'discard'),
  named('2001::/32', 'teredo'),
  named('2001:2::/48', 'benchmarking'),
  named('2001:10::/28', 'reserved'),
  named('2001:db8::/32', 'documentation'),
  named('2002::/16', '6to4'),
  named('3fff::/20', 'documentation'),
  named('fc00::/7', 'unique_local'),
  named('fe80::/10', 'link_local'),
  named('fec0::/10', 'site_local'),
  named('ff00::/8', 'multicast'),
]

/** IPv6 outside global unicast is unassigned or special: blocked too. */
const GLOBAL_UNICAST_V6 = named('2000::/3', 'global_unicast')

/** The range that blocks an address (the first that matches names it), or undefined. */
function blockingRange(address: Address): NamedRange | undefined {
  if (address.kind() === 'ipv4') return BLOCKED_V4.find((range) => inRange(address, range.network))
  const special = BLOCKED_V6.find((range) => inRange(address, range.network))
  if (special !== undefined || inRange(address, GLOBAL_UNICAST_V6.network)) return special
  return { ...GLOBAL_UNICAST_V6, cidr: `outside ${GLOBAL_UNICAST_V6.cidr}`, reason: 'not_global_unicast' }
}

/** Whether `address` lies in a parsed CIDR (families differing: no). */
function inRange(address: Address, [network, prefix]: readonly [Address, number]): boolean {
  return network.kind() === address.kind() && address.match(network, prefix)
}

/** The IPv4 address an IPv6 address stands for, when it is one of the forms that embed one; else the address. */
function effectiveAddress(address: Address): Address {
  if (address.kind() === 'ipv4') return address
  const v6 = address as ipaddr.IPv6
  const p = v6.parts
  const zeros = (from: number, to: number) => p.slice(from, to).every((part) => part === 0)
  const embedded = () => new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff])
  if (zeros(0, 5) && p[5] === 0xffff) return embedded() // ::ffff:a.b.c.d, mapped
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return embedded() // ::ffff:0:a.b.c.d, translated (RFC 6145)
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return embedded() // 64:ff9b::a.b.c.d, NAT64 (RFC 6052)
  // ::a.b.c.d, IPv4-compatible (deprecated); `::` and `::1` are IPv6's own.
  if (zeros(0, 6) && (p[6] !== 0 || p[7] > 1)) return embedded()
  return v6
}

/** An address as DNS answers it or a URL's host holds it (brackets and a zone allowed); undefined: not an address. */
function parseAddress(text: string): Address | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  // `net.isIP` is strict (dotted decimal only): `0x7f.1` or `0177.0.0.1` are not addresses here, even though some
  // resolvers would read them as 127.0.0.1.
  if (isIP(bare) === 0) return undefined
  try {
    return ipaddr.parse(bare)
  } catch {
    return undefined
  }
}

/**
 * Whether deliveries may connect to `address`. Blocked: loopback, unspecified, private, link-local, CGNAT,
 * benchmarking, documentation, multicast, reserved and the other special-purpose ranges; IPv6 forms that embed an
 * IPv4 address are judged as that address. An address inside an allow-list range is allowed, except the cloud
 * metadata addresses, which are blocked always. Anything that is not an IP address is blocked.
 */
export function isBlockedAddress(address: string, allow: AllowList): AddressVerdict {
  const parsed = parseAddress(address)
  if (parsed === undefined) return { blocked: true, reason: 'not_an_address' }
  const judged = effectiveAddress(parsed)
  const metadata = CLOUD_METADATA.find((range) => inRange(judged, range.network))
  if (metadata !== undefined) return { blocked: true, ...rangeVerdict(metadata) }
  if (allow.cidrs.some((cidr) => inRange(judged, ipaddr.parseCIDR(cidr)))) return { blocked: false }
  const range = blockingRange(judged)
  return range === undefined ? { blocked: false } : { blocked: true, ...rangeVerdict(range) }
}

function rangeVerdict(range: NamedRange): { range: string; reason: string } {
  return { range: range.cidr, reason: range.reason }
}

const LOOPBACK_CIDRS = ['127.0.0.0/8', '::1/128'] as const

const ALLOW_SYNTAX = 'expected none, loopback, or a comma-separated list of CIDRs or addresses (10.0.0.0/8,fd00::/8)'

/** One entry of a list: `loopback`, an address, or a CIDR; answers its canonical CIDRs. */
function parseAllowEntry(entry: string): string[] {
  if (entry.toLowerCase() === 'loopback') return [...LOOPBACK_CIDRS]
  const slash = entry.lastIndexOf('/')
  const addressText = slash === -1 ? entry : entry.slice(0, slash)
  const prefixText = slash === -1 ? undefined : entry.slice(slash + 1)
  const address = parseAddress(addressText)
  if (address === undefined || addressText.includes('%')) {
    throw new Error(`webhook allow list: "${entry}" is not an IP address or CIDR (${ALLOW_SYNTAX})`)
  }
  const maxPrefix = address.kind() === 'ipv4' ? 32 : 128
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) {
    throw new Error(`webhook allow list: "${entry}" has a prefix length that is not a number`)
  }
  const prefix = prefixText === undefined ? maxPrefix : Number(prefixText)
  if (prefix > maxPrefix) throw new Error(`webhook allow list: "${entry}" has a prefix length over ${maxPrefix}`)
  const network = address.kind() === 'ipv4' ? ipaddr.IPv4 : ipaddr.IPv6
  const networkAddress = network.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
  if (networkAddress.toString() !== address.toString()) {
    throw new Error(
      `webhook allow list: "${entry}" has host bits set (did you mean ${networkAddress.toString()}/${prefix}?)`,
    )
  }
  // A mapped range (::ffff:10.0.0.0/104) is kept as the IPv4 range it covers, since addresses are judged that way.
  const mapped = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96
  if (mapped) return [`${(address as ipaddr.IPv6).toIPv4Address().toString()}/${prefix - 96}`]
  return [`${address.toString()}/${prefix}`]
}

/**
 * `--webhook-allow-cidr`: `none` (nothing beyond the policy), `loopback` (127.0.0.0/8 and ::1/128), or a
 * comma-separated list of CIDRs and single addresses, IPv4 and IPv6 (`loopback` may be one of them). Throws an Error
 * naming the bad entry on anything else.
 */
export function parseAllowCidrs(value: string): AllowList {
  const text = value.trim()
  if (text.toLowerCase() === 'none') return { kind: 'none', cidrs: [] }
  if (text.toLowerCase() === 'loopback') return { kind: 'loopback', cidrs: [...LOOPBACK_CIDRS] }
  if (text === '') throw new Error(`webhook allow list: empty (${ALLOW_SYNTAX})`)
  const cidrs: string[] = []
  for (const raw of text.split(',')) {
    const entry = raw.trim()
    if (entry === '') throw new Error(`webhook allow list: "${value}" has an empty entry (${ALLOW_SYNTAX})`)
    if (entry.toLowerCase() === 'none') throw new Error('webhook allow list: "none" cannot be part of a list')
    for (const cidr of parseAllowEntry(entry)) if (!cidrs.includes(cidr)) cidrs.push(cidr)
  }
  return { kind: 'list', cidrs }
}

/** The allow list for the start-up line, e.g. `loopback (127.0.0.0/8, ::1/128)`. */
export function describeAllowList(list: AllowList): string {
  if (list.kind === 'none') return 'none'
  if (list.kind === 'loopback') return `loopback (${list.cidrs.join(', ')})`
  return list.cidrs.join(', ')
}
