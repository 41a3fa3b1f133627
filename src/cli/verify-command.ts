import { join } from 'node:path'
import { existsSync } from 'node:fs'
import type { Command } from 'commander'
import { openStore, type Store } from '../store/index.ts'
import { addStoreOptions, option, parseIntArg, parseUrl } from './options.ts'

interface VerifyFlags {
  dataDir: string
  store: string
  chainApi?: string
  samples: number
}

/** Compares the ids of up to `samples` irreversible stored blocks with the chain's `get_block`. */
async function sampleAgainstChain(store: Store, chainApi: string, samples: number): Promise<string[]> {
  const findings: string[] = []
  const info = (await (await fetch(`${chainApi}/v1/chain/get_info`, { method: 'POST' })).json()) as {
    last_irreversible_block_num: number
  }
  const position = await store.position()
  const high = Math.min(position?.head.blockNum ?? 0, info.last_irreversible_block_num)
  if (high < 1) return findings
  const step = Math.max(1, Math.floor(high / samples))
  for (let num = high; num >= 1; num -= step) {
    const stored = await store.blockByNum(num)
    const response = await fetch(`${chainApi}/v1/chain/get_block`, {
      method: 'POST',
      body: JSON.stringify({ block_num_or_id: num }),
    })
    if (!response.ok) {
      findings.push(`the chain could not answer get_block ${num} (HTTP ${response.status})`)
      continue
    }
    const block = (await response.json()) as { id: string }
    if (!stored) findings.push(`irreversible block ${num} is missing from the store`)
    else if (stored.id !== block.id)
      findings.push(`block ${num} is ${stored.id} in the store but ${block.id} on the chain`)
  }
  return findings
}

/** `antler verify`: the store's integrity, optionally sampled against the chain. */
export function registerVerifyCommand(program: Command): void {
  const command = program
    .command('verify')
    .description('check the store for gaps, duplicates and broken block links; exit 0 only when clean')
  addStoreOptions(command)
  option(
    command,
    '--chain-api <url>',
    'also compare sampled blocks with this chain API',
    parseUrl(['http:', 'https:']),
    undefined,
  )
  option(command, '--samples <n>', 'blocks to sample against the chain', parseIntArg(1, 100_000), 50)
  command.action(async (flags: VerifyFlags) => {
    if (flags.store === 'sqlite' && !existsSync(join(flags.dataDir, 'store.sqlite')))
      throw new Error(`no store at ${join(flags.dataDir, 'store.sqlite')}`)
    const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
    try {
      const findings = await store.integrityFindings()
      if (flags.chainApi)
        findings.push(...(await sampleAgainstChain(store, flags.chainApi.replace(/\/$/, ''), flags.samples)))
      const position = await store.position()
      for (const finding of findings) process.stdout.write(`finding: ${finding}\n`)
      process.stdout.write(
        findings.length === 0
          ? `verify: clean (head ${position?.head.blockNum ?? 'none'}, LIB ${position?.lib ?? 'none'})\n`
          : `verify: ${findings.length} finding(s)\n`,
      )
      process.exitCode = findings.length === 0 ? 0 : 1
    } finally {
      await store.close()
    }
  })
}
