// Package graph is Cascade's GraphQL API: the schema under schema/, the
// code gqlgen generates from it (committed, never edited by hand), and
// server.go, which builds the HTTP handler with its transports and the one
// error presenter, access.go (tokens), limits.go (what one client may
// ask), websocket.go and wire.go (each websocket's send queue and its
// writer) and hub.go (identical subscriptions share one execution).
package graph

//go:generate sh -c "cd .. && go tool gqlgen generate"
