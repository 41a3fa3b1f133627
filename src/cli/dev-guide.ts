/** The short guide `antler dev` prints to stderr after the ready line (stdout stays machine-readable). */
export function devGuide(args: {
  api: string
  grpc: string
  chainApi: string
  apiKey: string
  noAuth: boolean
}): string {
  const auth = args.noAuth
    ? ['  auth is OFF (--no-auth): no token is needed, anyone who can reach the port can call the API.']
    : [
        `  API key (server, kept in the data dir): ${args.apiKey}`,
        '',
        '  First calls:',
        `    TOKEN=$(curl -s ${args.api}/v1/auth/issue -d '{"api_key":"${args.apiKey}"}' | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')`,
        `    curl -s ${args.api}/v1/chain/get_currency_balance -H "Authorization: Bearer $TOKEN" -d '{"code":"eosio.token","account":"alice","symbol":"EOS"}'`,
      ]
  return [
    '',
    'Antler is running.',
    `  API        ${args.api}   (health: ${args.api}/healthz, OpenAPI: ${args.api}/openapi.json, metrics: ${args.api}/metrics)`,
    `  gRPC       ${args.grpc}`,
    `  devchain   ${args.chainApi}   (nodeos-compatible /v1/chain)`,
    ...auth,
    '',
    '  Docs: docs/API.md (routes, curl examples), docs/ERRORS.md (error codes), docs/OPERATIONS.md.',
    '',
  ].join('\n')
}
