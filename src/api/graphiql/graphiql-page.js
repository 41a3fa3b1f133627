// Antler's GraphiQL page script, served at /graphiql/assets/page.js after React, ReactDOM and GraphiQL's UMD
// builds (the globals React, ReactDOM and GraphiQL). Plain browser JavaScript, no bundler, no inline script: it
// mounts GraphiQL with a fetcher that sends queries and mutations as `POST /graphql` and subscriptions over the
// `/graphql` WebSocket in the graphql-transport-ws protocol, with the token typed in the page's header (kept in
// sessionStorage, so it lasts as long as the tab).

/* global window, document, sessionStorage, location, fetch, WebSocket */
;(() => {
  'use strict'

  const ENDPOINT = '/graphql'
  const SUBPROTOCOL = 'graphql-transport-ws'
  const TOKEN_KEY = 'antler.graphiql.token'
  const SUBSCRIPTION_ID = '1'

  const DEFAULT_QUERY = `# Antler GraphiQL: queries run as POST /graphql, subscriptions over the /graphql WebSocket.
# Paste a token from POST /v1/auth/issue in the field above (none is needed when Antler runs with --no-auth).
#
# The last five transactions with an action received by eosio.token, oldest first:
{
  searchTransactionsForward(query: "receiver:eosio.token", limit: 5) {
    cursor
    results {
      block {
        num
      }
      trace {
        id
        matchingActions {
          account
          name
          json
        }
      }
    }
  }
}

# The same search, live (one result per matching transaction as blocks come):
# subscription {
#   searchTransactionsForward(query: "receiver:eosio.token") {
#     undo
#     block { num }
#     trace { id matchingActions { account name json } }
#   }
# }
`

  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) ?? ''
    } catch {
      return '' // storage refused (privacy settings): the field still works for this page
    }
  }

  function storeToken(token) {
    try {
      if (token) sessionStorage.setItem(TOKEN_KEY, token)
      else sessionStorage.removeItem(TOKEN_KEY)
    } catch {
      // storage refused: the token lasts as long as the page
    }
  }

  /** The Authorization header to send: one typed in GraphiQL's Headers editor wins over the token field. */
  function authorization(token, headers) {
    const typed = Object.keys(headers).find((name) => name.toLowerCase() === 'authorization')
    if (typed !== undefined) return String(headers[typed])
    return token ? `Bearer ${token}` : undefined
  }

  /** The Headers editor's headers but Authorization, as strings. */
  function otherHeaders(headers) {
    const out = {}
    for (const [name, value] of Object.entries(headers))
      if (name.toLowerCase() !== 'authorization') out[name] = String(value)
    return out
  }

  /** Whether the operation to run is a subscription: from GraphiQL's parsed document, else from the text. */
  function isSubscription(params, documentAST) {
    const operations = (documentAST?.definitions ?? []).filter((d) => d.kind === 'OperationDefinition')
    if (operations.length === 0) return /^\s*subscription\b/m.test(params.query.replace(/#.*$/gm, ''))
    const operation = params.operationName
      ? operations.find((d) => d.name?.value === params.operationName)
      : operations[0]
    return operation?.operation === 'subscription'
  }

  /** A query or mutation: `POST /graphql`, the answer's JSON (always 200 with `{data, errors}` from Antler). */
  async function post(params, headers, auth) {
    const response = await fetch(ENDPOINT, {
      method: 'POST',
      headers: {
        ...headers,
        'Content-Type': 'application/json',
        Accept: 'application/json',
        ...(auth ? { Authorization: auth } : {}),
      },
      body: JSON.stringify(params),
    })
    const text = await response.text()
    try {
      return JSON.parse(text)
    } catch {
      return { errors: [{ message: `HTTP ${response.status}: ${text.slice(0, 500)}` }] }
    }
  }

  function socketUrl() {
    return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${ENDPOINT}`
  }

  /**
   * A subscription as the Observable GraphiQL expects: one WebSocket per subscription, in graphql-transport-ws
   * (connection_init with the token, connection_ack, subscribe, then next frames until complete or error).
   */
  function subscription(params, auth) {
    return {
      subscribe(sink) {
        const socket = new WebSocket(socketUrl(), SUBPROTOCOL)
        let done = false
        const send = (frame) => socket.send(JSON.stringify(frame))
        const finish = (error) => {
          if (done) return
          done = true
          if (error) sink.error(error)
          else sink.complete()
          socket.close(1000)
        }
        socket.onopen = () => send({ type: 'connection_init', payload: auth ? { Authorization: auth } : {} })
        socket.onmessage = (event) => {
          let frame
          try {
            frame = JSON.parse(event.data)
          } catch {
            return finish(new Error('the server sent a frame that is not JSON'))
          }
          if (done) return
          if (frame.type === 'connection_ack') send({ id: SUBSCRIPTION_ID, type: 'subscribe', payload: params })
          else if (frame.type === 'ping') send({ type: 'pong', payload: frame.payload })
          else if (frame.id !== SUBSCRIPTION_ID) return
          else if (frame.type === 'next') sink.next(frame.payload)
          else if (frame.type === 'error') {
            sink.next({ errors: Array.isArray(frame.payload) ? frame.payload : [frame.payload] })
            finish()
          } else if (frame.type === 'complete') finish()
        }
        socket.onclose = (event) => {
          const reason = event.reason ? `: ${event.reason}` : ''
          finish(new Error(`the WebSocket closed (code ${event.code}${reason})`))
        }
        return {
          unsubscribe() {
            if (!done && socket.readyState === WebSocket.OPEN) send({ id: SUBSCRIPTION_ID, type: 'complete' })
            done = true
            socket.close(1000)
          },
        }
      },
    }
  }

  /** GraphiQL's fetcher for one token: POST for queries and mutations, the WebSocket for subscriptions. */
  function createFetcher(token) {
    return (params, options = {}) => {
      const headers = options.headers ?? {}
      const auth = authorization(token, headers)
      if (isSubscription(params, options.documentAST)) return subscription(params, auth)
      return post(params, otherHeaders(headers), auth)
    }
  }

  function main() {
    const { React, ReactDOM, GraphiQL } = window
    const container = document.getElementById('graphiql')
    if (!React || !ReactDOM || !GraphiQL) {
      container.textContent = 'GraphiQL did not load (see the browser console).'
      return
    }
    const input = document.getElementById('antler-token')
    input.value = storedToken()
    const root = ReactDOM.createRoot(container)
    // A new fetcher makes GraphiQL fetch the schema again: done when the token changes (on Enter or leaving the field).
    const render = () =>
      root.render(
        // The UMD build's global is the GraphiQL component itself (with its helpers as properties).
        React.createElement(GraphiQL, {
          fetcher: createFetcher(input.value.trim()),
          defaultQuery: DEFAULT_QUERY,
          isHeadersEditorEnabled: true,
          shouldPersistHeaders: false,
        }),
      )
    input.addEventListener('change', () => {
      storeToken(input.value.trim())
      render()
    })
    render()
  }

  main()
})()
