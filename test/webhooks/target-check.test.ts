import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AntlerError } from '../../src/antelope/index.ts'
import { parseAllowCidrs } from '../../src/webhooks/address-policy.ts'
import {
  checkTargetUrl,
  resolveTarget,
  systemResolver,
  type ResolvedAddress,
  type Resolver,
} from '../../src/webhooks/target-check.ts'

const NONE = parseAllowCidrs('none')
const LOOPBACK = parseAllowCidrs('loopback')

/** A resolver answering from a table, recording each name it was asked. */
function tableResolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = []
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname)
    const addresses = table[hostname]
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return Object.assign(resolve, { asked })
}

/** The refusal `promise` or `run` ends with: code, reason and address. */
function refusal(error: unknown): { code: string; reason: unknown; address: unknown } {
  assert.ok(error instanceof AntlerError, `not an AntlerError: ${String(error)}`)
  return { code: error.code, reason: error.details.reason, address: error.details.address }
}

async function refusalOf(promise: Promise<unknown>): Promise<ReturnType<typeof refusal>> {
  try {
    await promise
  } catch (error) {
    return refusal(error)
  }
  assert.fail('the target was not refused')
}

function refusalOfUrl(url: string): ReturnType<typeof refusal> {
  try {
    checkTargetUrl(url)
  } catch (error) {
    return refusal(error)
  }
  assert.fail(`${url} was not refused`)
}

test('checkTargetUrl accepts absolute http and https URLs and strips a fragment', () => {
  assert.equal(checkTargetUrl('https://hooks.example.com/in?x=1').href, 'https://hooks.example.com/in?x=1')
  assert.equal(checkTargetUrl('http://hooks.example.com:8080').href, 'http://hooks.example.com:8080/')
  assert.equal(checkTargetUrl('https://hooks.example.com/in#part').href, 'https://hooks.example.com/in')
  assert.equal(checkTargetUrl('HTTPS://Hooks.Example.COM/a').href, 'https://hooks.example.com/a')
  const base = 'https://h.example.com/'
  assert.equal(checkTargetUrl(`${base}${'a'.repeat(2048 - base.length)}`).href.length, 2048)
})

test('checkTargetUrl refuses other schemes, credentials, overlong and malformed URLs', () => {
  const cases: readonly (readonly [string, string])[] = [
    ['ftp://hooks.example.com/', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['ws://hooks.example.com/', 'scheme'],
    ['http://user:secret@hooks.example.com/', 'credentials'],
    ['https://user@hooks.example.com/', 'credentials'],
    ['https://:secret@hooks.example.com/', 'credentials'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, 'too_long'],
    // Under 2,048 characters as given, over once percent-encoded.
    [`https://hooks.example.com/${' '.repeat(1000)}x`, 'too_long'],
    ['not a url', 'malformed'],
    ['/relative/path', 'malformed'],
    ['https://', 'malformed'],
    ['http://[::1/', 'malformed'],
    ['http://hooks.example.com:0/', 'malformed'],
    ['http://hooks.example.com:99999/', 'malformed'],
  ]
  for (const [url, reason] of cases) {
    assert.deepEqual(refusalOfUrl(url), { code: 'webhook_target_refused_error', reason, address: undefined }, url)
  }
  // The error carries the URL (an overlong one in part) and answers 400.
  try {
    checkTargetUrl(`https://hooks.example.com/${'a'.repeat(3000)}`)
  } catch (error) {
    assert.ok(error instanceof AntlerError)
    assert.equal(error.status, 400)
    assert.ok(String(error.details.url).length < 300)
  }
})

test('IP-literal targets in blocked ranges are refused with their address, and are never resolved', async () => {
  const resolver = tableResolver({})
  const cases: readonly (readonly [string, string])[] = [
    ['http://127.0.0.1/', '127.0.0.1'],
    ['http://127.0.0.1:8080/hook', '127.0.0.1'],
    ['http://[::1]/', '::1'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[::ffff:7f00:1]/', '::ffff:7f00:1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
    ['http://10.1.2.3/', '10.1.2.3'],
    ['http://100.64.0.1/', '100.64.0.1'],
    ['http://198.18.0.1/', '198.18.0.1'],
    ['http://[fe80::1]/', 'fe80::1'],
    ['http://[fc00::1]/', 'fc00::1'],
    ['http://0.0.0.0/', '0.0.0.0'],
  ]
  for (const [url, address] of cases) {
    const refused = await refusalOf(resolveTarget(checkTargetUrl(url), NONE, resolver))
    assert.deepEqual(refused, { code: 'webhook_target_refused_error', reason: 'blocked_ip', address }, url)
  }
  assert.deepEqual(resolver.asked, [])
})

test('the metadata address is refused even with an allow list covering it', async () => {
  for (const list of ['169.254.0.0/16', '0.0.0.0/0,::/0']) {
    const allow = parseAllowCidrs(list)
    for (const url of ['http://169.254.169.254/', 'http://[::ffff:169.254.169.254]/', 'http://[fd00:ec2::254]/']) {
      const refused = await refusalOf(resolveTarget(checkTargetUrl(url), allow, tableResolver({})))
      assert.equal(refused.reason, 'blocked_ip', `${url} under ${list}`)
    }
  }
})

test('a name is resolved and every address checked: one private address refuses the target', async () => {
  const resolver = tableResolver({
    'internal.test': ['10.0.0.5'],
    'mixed.test': ['93.184.216.34', '192.168.0.10'],
    'mixed6.test': ['2606:2800:220:1::1', 'fe80::2'],
    'public.test': ['93.184.216.34', '2606:2800:220:1::1'],
    'empty.test': [],
  })
  const refused = (url: string) => refusalOf(resolveTarget(new URL(url), NONE, resolver))
  assert.deepEqual(await refused('https://internal.test/'), {
    code: 'webhook_target_refused_error',
    reason: 'blocked_ip',
    address: '10.0.0.5',
  })
  assert.equal((await refused('https://mixed.test/')).address, '192.168.0.10')
  assert.equal((await refused('https://mixed6.test/')).address, 'fe80::2')
  assert.deepEqual(await resolveTarget(new URL('https://public.test/in'), NONE, resolver), {
    address: '93.184.216.34',
    family: 4,
  })
  assert.deepEqual(await refused('https://unknown.test/'), {
    code: 'webhook_target_refused_error',
    reason: 'dns',
    address: undefined,
  })
  assert.equal((await refused('https://empty.test/')).reason, 'dns')
  assert.deepEqual(resolver.asked, [
    'internal.test',
    'mixed.test',
    'mixed6.test',
    'public.test',
    'unknown.test',
    'empty.test',
  ])
})

test('public IP literals are allowed as they are; the family follows from the address', async () => {
  const resolver = tableResolver({})
  assert.deepEqual(await resolveTarget(new URL('https://93.184.216.34/'), NONE, resolver), {
    address: '93.184.216.34',
    family: 4,
  })
  assert.deepEqual(await resolveTarget(new URL('https://[2606:4700:4700::1111]:8443/'), NONE, resolver), {
    address: '2606:4700:4700::1111',
    family: 6,
  })
  const liar: Resolver = async () => [{ address: '2606:4700:4700::1111', family: 4 }]
  assert.deepEqual(await resolveTarget(new URL('https://liar.test/'), NONE, liar), {
    address: '2606:4700:4700::1111',
    family: 6,
  })
})

test('the allow list applies to resolved names and literals alike', async () => {
  const resolver = tableResolver({ 'hooks.test': ['127.0.0.1'], 'lan.test': ['10.20.0.7'] })
  assert.deepEqual(await resolveTarget(new URL('http://hooks.test:9000/'), LOOPBACK, resolver), {
    address: '127.0.0.1',
    family: 4,
  })
  assert.deepEqual(await resolveTarget(new URL('http://[::1]/'), LOOPBACK, resolver), { address: '::1', family: 6 })
  assert.equal((await refusalOf(resolveTarget(new URL('http://lan.test/'), LOOPBACK, resolver))).reason, 'blocked_ip')
  const lan = parseAllowCidrs('10.20.0.0/16')
  assert.equal((await resolveTarget(new URL('http://lan.test/'), lan, resolver)).address, '10.20.0.7')
  assert.equal((await refusalOf(resolveTarget(new URL('http://hooks.test/'), lan, resolver))).reason, 'blocked_ip')
})

test('the system resolver finds localhost on the loopback, which the policy refuses', async () => {
  const addresses = await systemResolver('localhost')
  assert.ok(addresses.length > 0)
  for (const { address, family } of addresses) {
    assert.ok(address === '::1' || address.startsWith('127.'), address)
    assert.equal(family, address.includes(':') ? 6 : 4)
  }
  const refused = await refusalOf(resolveTarget(new URL('http://localhost:8080/'), NONE, systemResolver))
  assert.equal(refused.reason, 'blocked_ip')
  assert.equal(
    (await refusalOf(resolveTarget(new URL('http://no-such-host.invalid/'), NONE, systemResolver))).reason,
    'dns',
  )
})
