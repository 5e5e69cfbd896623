// Package transport serves a gqlgen handler over HTTP and websockets, as
// package graph wires it (see New):
//
//   - http.go: GraphQL over HTTP by its spec (GET for queries, POST for all
//     but subscriptions), its media types and status codes;
//   - websocket.go, conn.go and wire.go: graphql-transport-ws and the
//     legacy graphql-ws over gorilla/websocket, each connection with one
//     bounded send queue and one writer, a client that stops reading
//     dropped with a close frame saying why, pings, and shutdown's 1001;
//   - hub.go: identical subscriptions share one execution;
//   - access.go: the tokens (cascade.Tokens) of requests and websockets,
//     and read-only tokens kept from mutations;
//   - limits.go: what one client may ask (depth, complexity, tokens,
//     subscriptions per websocket, websockets per address);
//   - server.go: the origin check and the wiring of the above.
//
// It knows nothing of the schema beyond the root field names the hub
// shares, and imports of this module only package cascade.
package transport
