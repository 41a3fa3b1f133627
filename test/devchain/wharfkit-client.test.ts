import { test } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient, Action, Asset, PrivateKey, SignedTransaction, Transaction, Name } from '@wharfkit/antelope'
import { DEV_PRIVATE_KEY, token } from '../../src/devchain/index.ts'
import { withDevchain } from '../_helpers/devchain.ts'

const key = PrivateKey.from(DEV_PRIVATE_KEY)

async function signedTransfer(client: APIClient, from: string, to: string, quantity: string, memo: string) {
  const info = await client.v1.chain.get_info()
  const header = info.getTransactionHeader(60)
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: from, permission: 'active' }],
      data: { from, to, quantity, memo },
    },
    token.abi,
  )
  const transaction = Transaction.from({ ...header, actions: [action] })
  const signature = key.signDigest(transaction.signingDigest(info.chain_id))
  return SignedTransaction.from({ ...transaction, signatures: [signature] })
}

test('wharfkit APIClient reads get_info, get_account, get_table_rows and get_currency_balance unchanged', async (t) => {
  const devchain = await withDevchain(t)
  const client = new APIClient({ url: devchain.chainApi })
  const info = await client.v1.chain.get_info()
  assert.equal(info.chain_id.toString(), devchain.chainId)
  assert.equal(info.head_block_num.toNumber(), devchain.chain.head.num)
  assert.ok(info.last_irreversible_block_num.toNumber() >= 1)

  const account = await client.v1.chain.get_account('alice')
  assert.equal(account.account_name.toString(), 'alice')
  assert.deepEqual(account.permissions.map((p) => p.perm_name.toString()).sort(), ['active', 'owner'])
  assert.equal(
    account.getPermission('active').required_auth.keys[0].key.toLegacyString(),
    key.toPublic().toLegacyString(),
  )

  const stats = await client.v1.chain.get_table_rows({ code: 'eosio.token', scope: 'EOS', table: 'stat', json: true })
  assert.deepEqual(stats.rows, [{ supply: '1000000000.0000 EOS', max_supply: '10000000000.0000 EOS', issuer: 'eosio' }])

  const balances = await client.v1.chain.get_currency_balance('eosio.token', 'alice', 'EOS')
  assert.deepEqual(balances.map(String), ['1000.0000 EOS'])
})

test('wharfkit-signed transfers pushed and sent move balances', async (t) => {
  const devchain = await withDevchain(t)
  const client = new APIClient({ url: devchain.chainApi })

  const pushed = await client.v1.chain.push_transaction(
    await signedTransfer(client, 'alice', 'bob', '1.5000 EOS', 'push'),
  )
  assert.equal(pushed.processed.receipt.status, 'executed')
  assert.deepEqual(
    pushed.processed.action_traces.map((a) => String(a.receiver)),
    ['eosio.token', 'alice', 'bob'],
  )

  const sent = await client.v1.chain.send_transaction(
    await signedTransfer(client, 'bob', 'carol', '0.2500 EOS', 'send'),
  )
  assert.equal(sent.processed.receipt.status, 'executed')

  const sent2 = await client.v1.chain.send_transaction2(
    await signedTransfer(client, 'carol', 'alice', '0.0001 EOS', 'send2'),
  )
  assert.equal(sent2.processed.receipt?.status, 'executed')

  const balance = async (who: string) =>
    String((await client.v1.chain.get_currency_balance('eosio.token', who, 'EOS'))[0])
  assert.equal(await balance('alice'), '998.5001 EOS')
  assert.equal(await balance('bob'), '1001.2500 EOS')
  assert.equal(await balance('carol'), '1000.2499 EOS')
  const supply = Asset.from('1000000000.0000 EOS')
  assert.equal(String((await client.v1.chain.get_currency_stats('eosio.token', 'EOS'))['EOS'].supply), String(supply))
  assert.ok(Name.from('alice'))
})

test('wharfkit reads blocks and ABIs of the devchain', async (t) => {
  const devchain = await withDevchain(t)
  const client = new APIClient({ url: devchain.chainApi })
  const block = await client.v1.chain.get_block(2)
  assert.equal(String(block.id), devchain.chain.block(2)!.id)
  assert.equal(block.block_num.toNumber(), 2)
  assert.ok(block.transactions.length >= 5, 'the boot transactions are in block 2')
  const abi = await client.v1.chain.get_abi('eosio.token')
  assert.deepEqual(abi.abi?.tables.map((t) => String(t.name)).sort(), ['accounts', 'stat'])
  const raw = await client.v1.chain.get_raw_abi('rawdb')
  assert.equal(String(raw.account_name), 'rawdb')
})
