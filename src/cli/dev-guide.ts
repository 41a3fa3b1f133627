/** The short guide `antler dev` prints to stderr after the ready line (stdout stays machine-readable). */
export function devGuide(args: {
  api: string
  grpc: string
  chainApi: string
  apiKey: string
  noAuth: boolean
  /** The portal's one-time setup token while no account exists. */
  setup?: { readonly token: string; readonly file: string }
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
    `  portal     ${args.api}/portal`,
    ...(args.setup ? [portalSetupLine(args.api, args.setup)] : []),
    ...auth,
    '',
    '  Docs: docs/API.md (routes, curl examples), docs/ERRORS.md (error codes), docs/OPERATIONS.md.',
    '',
  ].join('\n')
}

/** What `dev` and `serve` print while no portal account exists: the one-time token that creates the first. */
export function portalSetupLine(api: string, setup: { readonly token: string; readonly file: string }): string {
  return `  portal setup: no account yet; open ${api}/portal/setup with the one-time token ${setup.token} (also in ${setup.file})`
}
