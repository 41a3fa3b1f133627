import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { onCleanup } from '../_helpers/cleanup.ts'
import { pollUntil } from '../_helpers/push.ts'
import { isStandardError, startPlatform } from '../_helpers/platform.ts'
import {
  createKeyWithFetch,
  csrfOfSession,
  keysOf,
  portalFetch,
  setUpWithFetch,
  type Answer,
} from '../_helpers/portal.ts'

/*
 * The portal's errors go the app's one way (src/api/plugins/errors.ts): the status, the log line and the headers are
 * decided there, the portal only shows them. An unexpected failure (a store table gone under the running server) on a
 * page, on the page's JSON and in a form: 500 `unexpected_error` with a fixed message, the trace id in X-Trace-Id and
 * on the page, and exactly one `unexpected error` log line with that trace id. And the forms' schemas are the contract:
 * a field sent twice, a field no form has, an unchecked confirm box, a value no radio button has are refused with
 * `request_validation_error` naming the field, and nothing changes.
 */

const OPTIONS = { timeout: 180_000 }

const loopback = (api: string) => `http://127.0.0.1:${new URL(api).port}`

/** What an error page or a refused form shows: its code, its trace id, the fields it names. */
function shown(answer: Answer): { code?: string; trace?: string; fields: string[] } {
  return {
    code: /Code <code>([a-z0-9_]+)<\/code>/.exec(answer.text)?.[1],
    trace: /trace <code>([0-9a-f]+)<\/code>/.exec(answer.text)?.[1],
    fields: [...answer.text.matchAll(/<li><strong>([^<]+)<\/strong>:/g)].map((m) => m[1]),
  }
}

/** The platform's JSON log lines with this trace id. */
function logLinesOf(stderr: string, traceId: string): { msg?: string; level?: number }[] {
  return stderr
    .split('\n')
    .filter((line) => line.includes(traceId))
    .map((line) => JSON.parse(line) as { msg?: string; level?: number })
}

test(
  'an unexpected failure on a portal page, its JSON and a form: 500 with the trace id the client got, logged once with it',
  OPTIONS,
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    const cookie = await setUpWithFetch(base, p.dataDir)
    const key = await createKeyWithFetch(base, cookie, { name: 'kept', type: 'server' })
    const csrf = await csrfOfSession(base, cookie)

    // Two tables the portal reads and writes, renamed under the running server (SQLite re-reads its schema).
    const db = new Database(join(p.dataDir, 'store.sqlite'))
    db.pragma('busy_timeout = 5000')
    onCleanup(t, () => db.close())
    db.exec('ALTER TABLE key_usage RENAME TO key_usage_gone; ALTER TABLE audit_log RENAME TO audit_log_gone')
    const page = await portalFetch(base, `/portal/keys/${key.id}`, { cookie })
    const json = await portalFetch(base, `/portal/keys/${key.id}/usage.json`, { cookie })
    const form = await portalFetch(base, '/portal/keys', {
      cookie,
      form: { _csrf: csrf, name: 'not audited', type: 'server', origins: '' },
    })
    db.exec('ALTER TABLE key_usage_gone RENAME TO key_usage; ALTER TABLE audit_log_gone RENAME TO audit_log')

    const traces: [string, string][] = []
    for (const [what, answer] of [
      ['page', page],
      ['form', form],
    ] as const) {
      assert.equal(answer.status, 500, `${what}: ${answer.text.slice(0, 300)}`)
      assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, what)
      const trace = answer.headers.get('x-trace-id') ?? ''
      assert.match(trace, /^[0-9a-f]{32}$/, what)
      assert.deepEqual(shown(answer), { code: 'unexpected_error', trace, fields: [] }, `${what} shows code and trace`)
      assert.doesNotMatch(answer.text, /no such table|key_usage|audit_log|SqliteError/, `${what}: no cause shown`)
      traces.push([what, trace])
    }
    assert.match(form.text, /id="form-error"/, 'the form is shown again with the error')
    assert.match(form.text, /<form method="post" action="\/portal\/keys"/, 'on the keys page')

    assert.equal(json.status, 500)
    assert.match(json.headers.get('content-type') ?? '', /^application\/json/)
    const body = JSON.parse(json.text) as { code: string; trace_id: string }
    assert.ok(isStandardError(body), json.text)
    assert.equal(body.code, 'unexpected_error')
    assert.equal(body.trace_id, json.headers.get('x-trace-id'))
    traces.push(['json', body.trace_id])

    for (const [what, trace] of traces) {
      // The log line is written after the answer went out: it may reach this process's pipe a moment later.
      const lines = await pollUntil(
        async () => logLinesOf(p.cli.stderr(), trace),
        (found) => found.some((l) => l.msg === 'unexpected error'),
        5_000,
      ).catch(() => logLinesOf(p.cli.stderr(), trace))
      const unexpected = lines.filter((l) => l.msg === 'unexpected error')
      assert.equal(
        unexpected.length,
        1,
        `${what}: one "unexpected error" line with its trace id: ${JSON.stringify(lines)}`,
      )
      assert.equal(unexpected[0].level, 50, `${what}: at error level`)
    }
  },
)

test(
  "form bodies are the schemas': a field twice, an unknown field, an unchecked box, a value no radio has: 400 naming the field, nothing changed",
  OPTIONS,
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    const cookie = await setUpWithFetch(base, p.dataDir)
    const key = await createKeyWithFetch(base, cookie, { name: 'kept', type: 'web', origins: ['http://a.example'] })
    const csrf = await csrfOfSession(base, cookie)
    const before = await keysOf(base, cookie)

    /** A urlencoded body as a browser (or a script) sends it: pairs in order, a name may repeat. */
    const post = (path: string, pairs: [string, string][]) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          cookie: `__Host-antler_portal=${cookie}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams(pairs).toString(),
        redirect: 'manual',
        signal: AbortSignal.timeout(15_000),
      }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }))
    const cases: [string, string, [string, string][], string][] = [
      [
        'name sent twice',
        '/portal/keys',
        [
          ['_csrf', csrf],
          ['name', 'a'],
          ['name', 'b'],
          ['type', 'server'],
        ],
        'name',
      ],
      [
        'a field no form has',
        '/portal/keys',
        [
          ['_csrf', csrf],
          ['name', 'x'],
          ['type', 'server'],
          ['admin', '1'],
        ],
        'admin',
      ],
      [
        'a type no radio has',
        '/portal/keys',
        [
          ['_csrf', csrf],
          ['name', 'x'],
          ['type', 'root'],
        ],
        'type',
      ],
      [
        'no name',
        '/portal/keys',
        [
          ['_csrf', csrf],
          ['type', 'server'],
        ],
        'name',
      ],
      ['revoke, the box unchecked', `/portal/keys/${key.id}/revoke`, [['_csrf', csrf]], 'confirm'],
      [
        'revoke, another value',
        `/portal/keys/${key.id}/revoke`,
        [
          ['_csrf', csrf],
          ['confirm', 'on'],
        ],
        'confirm',
      ],
      [
        'rotate, a grace no radio has',
        `/portal/keys/${key.id}/rotate`,
        [
          ['_csrf', csrf],
          ['grace', '7'],
        ],
        'grace',
      ],
      [
        'edit, a limit twice',
        `/portal/keys/${key.id}`,
        [
          ['_csrf', csrf],
          ['name', 'kept'],
          ['callsPerMinute', '1'],
          ['callsPerMinute', '2'],
        ],
        'callsPerMinute',
      ],
      [
        'edit, a misspelt field',
        `/portal/keys/${key.id}`,
        [
          ['_csrf', csrf],
          ['name', 'renamed'],
          ['origin', 'http://b.example'],
        ],
        'origin',
      ],
      [
        'sign-out with more',
        '/portal/logout',
        [
          ['_csrf', csrf],
          ['all', 'yes'],
        ],
        'all',
      ],
    ]
    for (const [what, path, pairs, field] of cases) {
      const answer = await post(path, pairs)
      assert.equal(answer.status, 400, `${what}: ${answer.status} ${answer.text.slice(0, 200)}`)
      const page = shown(answer)
      assert.equal(page.code, 'request_validation_error', what)
      assert.deepEqual(page.fields, [field], `${what}: the page names the field`)
      assert.match(answer.headers.get('x-trace-id') ?? '', /^[0-9a-f]{32}$/, what)
    }
    const audit = await portalFetch(base, '/portal/audit?before=soon', { cookie })
    assert.equal(audit.status, 400)
    assert.deepEqual(shown(audit).fields, ['before'])

    assert.deepEqual(await keysOf(base, cookie), before, 'no key created, renamed, rotated or revoked')
    assert.equal((await portalFetch(base, '/portal/keys', { cookie })).status, 200, 'still signed in')
    assert.doesNotMatch(p.cli.stderr(), /unexpected error/, 'every refusal was on purpose')
  },
)
