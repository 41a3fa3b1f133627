import { test } from 'node:test'
import assert from 'node:assert/strict'
import { describeAllowList, isBlockedAddress, parseAllowCidrs } from '../../src/webhooks/address-policy.ts'

const NONE = parseAllowCidrs('none')

// Each blocked address with the reason the policy gives; IPv6 forms that embed an IPv4 address get its reason.
const BLOCKED: readonly (readonly [string, string])[] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['fc00::1', 'unique_local'],
  ['fd12:3456::1', 'unique_local'],
  ['169.254.1.1', 'link_local'],
  ['fe80::1', 'link_local'],
  ['fe80::1%eth0', 'link_local'],
  ['fec0::1', 'site_local'],
  ['100.64.0.1', 'carrier_grade_nat'],
  ['100.127.255.255', 'carrier_grade_nat'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['2001:2::1', 'benchmarking'],
  ['192.0.0.8', 'ietf_protocol'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.1', 'documentation'],
  ['203.0.113.1', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['2002:7f00:1::1', '6to4'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  ['4000::1', 'not_global_unicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:a9fe:101', 'link_local'],
  ['::7f00:1', 'loopback'],
  ['::a00:1', 'private'],
  ['::ffff:0:7f00:1', 'loopback'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b:1::1', 'nat64_local'],
  ['169.254.169.254', 'cloud_metadata'],
  ['fd00:ec2::254', 'cloud_metadata'],
  // Not addresses (in forms some resolvers would still read as 127.0.0.1): blocked.
  ['localhost', 'not_an_address'],
  ['0x7f.1', 'not_an_address'],
  ['0177.0.0.1', 'not_an_address'],
  ['2130706433', 'not_an_address'],
  ['', 'not_an_address'],
]

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '11.0.0.1',
  '172.32.0.1',
  '192.169.0.1',
  '100.128.0.1',
  '198.20.0.1',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
]

test('every special-purpose address is blocked, with the range and reason that block it', () => {
  for (const [address, reason] of BLOCKED) {
    const verdict = isBlockedAddress(address, NONE)
    assert.equal(verdict.blocked, true, address)
    assert.equal(verdict.reason, reason, address)
  }
  assert.deepEqual(isBlockedAddress('10.9.8.7', NONE), { blocked: true, range: '10.0.0.0/8', reason: 'private' })
  assert.deepEqual(isBlockedAddress('::ffff:7f00:1', NONE), { blocked: true, range: '127.0.0.0/8', reason: 'loopback' })
})

test('public addresses, IPv4 and IPv6 (and the IPv6 forms of public IPv4 addresses), are allowed', () => {
  for (const address of PUBLIC) assert.deepEqual(isBlockedAddress(address, NONE), { blocked: false }, address)
})

test('an address inside an allow-list range is allowed; the IPv6 forms of an allowed IPv4 address too', () => {
  const loopback = parseAllowCidrs('loopback')
  for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1']) {
    assert.equal(isBlockedAddress(address, loopback).blocked, false, address)
  }
  for (const address of ['10.0.0.1', '192.168.1.1', 'fe80::1', '169.254.1.1']) {
    assert.equal(isBlockedAddress(address, loopback).blocked, true, address)
  }
  const lan = parseAllowCidrs('10.20.0.0/16, fd00::/8,192.168.1.7')
  for (const address of ['10.20.3.4', 'fd00::5', 'fdff::1', '192.168.1.7', '::ffff:10.20.0.9']) {
    assert.equal(isBlockedAddress(address, lan).blocked, false, address)
  }
  for (const address of ['10.21.0.1', 'fc00::1', '192.168.1.8', '127.0.0.1', '::1']) {
    assert.equal(isBlockedAddress(address, lan).blocked, true, address)
  }
})

test('the cloud metadata addresses are blocked even when the allow list covers them', () => {
  for (const list of ['169.254.0.0/16', '0.0.0.0/0,::/0', '169.254.169.254', 'fd00::/8', '100.64.0.0/10']) {
    const allow = parseAllowCidrs(list)
    for (const address of ['169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '100.100.100.200']) {
      const verdict = isBlockedAddress(address, allow)
      assert.equal(verdict.blocked, true, `${address} under ${list}`)
      assert.equal(verdict.reason, 'cloud_metadata', `${address} under ${list}`)
    }
  }
  // The rest of the allowed range stays allowed.
  assert.equal(isBlockedAddress('169.254.1.1', parseAllowCidrs('169.254.0.0/16')).blocked, false)
  assert.equal(isBlockedAddress('10.0.0.1', parseAllowCidrs('0.0.0.0/0,::/0')).blocked, false)
})

test('allow lists parse: none, loopback, CIDRs and single addresses of both families, canonical and deduplicated', () => {
  assert.deepEqual(parseAllowCidrs('none'), { kind: 'none', cidrs: [] })
  assert.deepEqual(parseAllowCidrs(' NONE '), { kind: 'none', cidrs: [] })
  assert.deepEqual(parseAllowCidrs('loopback'), { kind: 'loopback', cidrs: ['127.0.0.0/8', '::1/128'] })
  assert.deepEqual(parseAllowCidrs('10.0.0.0/8, 10.0.0.0/8 ,10.0.0.7,fd00:0:0::/8,2001:DB8::1'), {
    kind: 'list',
    cidrs: ['10.0.0.0/8', '10.0.0.7/32', 'fd00::/8', '2001:db8::1/128'],
  })
  assert.deepEqual(parseAllowCidrs('loopback,192.168.0.0/16').cidrs, ['127.0.0.0/8', '::1/128', '192.168.0.0/16'])
  // An IPv4-mapped range is kept as the IPv4 range it covers (addresses are judged that way).
  assert.deepEqual(parseAllowCidrs('::ffff:10.0.0.0/104').cidrs, ['10.0.0.0/8'])
})

test('garbage allow lists are refused with a message naming the bad entry', () => {
  const cases: readonly (readonly [string, RegExp])[] = [
    ['', /empty/],
    ['   ', /empty/],
    ['all', /"all" is not an IP address or CIDR/],
    ['localhost', /"localhost" is not an IP address or CIDR/],
    ['300.0.0.1', /"300.0.0.1" is not/],
    ['0x7f.1', /"0x7f.1" is not/],
    ['10.0.0.0/33', /"10.0.0.0\/33" has a prefix length over 32/],
    ['fd00::/129', /"fd00::\/129" has a prefix length over 128/],
    ['10.0.0.0/', /"10.0.0.0\/" has a prefix length that is not a number/],
    ['10.0.0.0/8x', /prefix length that is not a number/],
    ['10.0.0.0/-1', /prefix length that is not a number/],
    ['/8', /"\/8" is not/],
    ['10.0.0.1/8', /"10.0.0.1\/8" has host bits set \(did you mean 10.0.0.0\/8\?\)/],
    ['fd00::1/8', /host bits set \(did you mean fd00::\/8\?\)/],
    ['10.0.0.0/8,', /has an empty entry/],
    ['10.0.0.0/8,,fd00::/8', /has an empty entry/],
    ['none,10.0.0.0/8', /"none" cannot be part of a list/],
    ['fe80::1%eth0', /"fe80::1%eth0" is not/],
  ]
  for (const [value, message] of cases) {
    assert.throws(() => parseAllowCidrs(value), message, JSON.stringify(value))
  }
})

test('describeAllowList names the list for the start-up line', () => {
  assert.equal(describeAllowList(parseAllowCidrs('none')), 'none')
  assert.equal(describeAllowList(parseAllowCidrs('loopback')), 'loopback (127.0.0.0/8, ::1/128)')
  assert.equal(describeAllowList(parseAllowCidrs('10.0.0.0/8,fd00::/8')), '10.0.0.0/8, fd00::/8')
})
