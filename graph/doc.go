// Package graph is Cascade's GraphQL schema and the handler built from it:
// the schema under schema/, the code gqlgen generates from it (generated.go
// and model/, committed, never edited by hand), and server.go, which builds
// the endpoint: the executable schema around the resolvers (package
// resolvers implements ResolverRoot), priced by complexity.go for the
// complexity limit, with the query caches, introspection, persisted
// queries, the one error presenter (a *cascade.Error keeps its code and
// message, anything else is INTERNAL) and the panic handler, served by
// package graph/transport, which owns HTTP and websockets, tokens, limits
// and shared subscriptions.
//
// It imports of this module only package cascade and graph/...: the
// domain types it binds and its own transport.
package graph

//go:generate sh -c "cd .. && go tool gqlgen generate"
