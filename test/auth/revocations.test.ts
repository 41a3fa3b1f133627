import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRevocationWatch } from '../../src/auth/index.ts'
import { capturedLog } from '../_helpers/captured-log.ts'
import { eventually } from '../_helpers/portal.ts'

const TIMEOUT = { timeout: 30_000 }

test(
  'revocation watch: a store failing every tick is logged once in full, the repeats as one count, then recovered; the last set is kept meanwhile',
  TIMEOUT,
  async () => {
    let failing = false
    let reads = 0
    const store = {
      async revokedApiKeyIds() {
        reads++
        if (failing) throw new Error('the store is restarting')
        return ['key_a']
      },
    }
    const log = capturedLog()
    const watch = await createRevocationWatch({ store, intervalMs: 10, log })
    failing = true
    const from = reads
    await eventually('ten failed ticks', async () => (reads - from >= 10 ? true : undefined), 5_000, 5)
    assert.ok(watch.isRevoked('key_a'), 'the last known set is kept while reads fail')
    failing = false
    await eventually(
      'the recovery',
      async () => (log.lines.some((l) => l.level === 'info') ? true : undefined),
      5_000,
      5,
    )
    watch.close()
    const messages = log.messages()
    assert.equal(messages[0], 'revocation refresh failed: the store is restarting')
    assert.match(messages[1], /^revocation refresh failed \d+ more times in the last N s: the store is restarting$/)
    assert.deepEqual(messages.slice(2), ['revocation refresh recovered'])
  },
)
