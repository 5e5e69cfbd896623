// Package graph is Cascade's GraphQL API: the schema under schema/, the
// code gqlgen generates from it (committed, never edited by hand), and
// server.go, which builds the HTTP handler with its transports and the one
// error presenter, access.go (tokens) and limits.go (what one client may
// ask).
package graph

//go:generate sh -c "cd .. && go tool gqlgen generate"
