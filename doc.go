// Package cascade holds the domain types every other package shares: traces,
// their kernels, their states, and the typed errors the API reports.
//
// It imports only the standard library. Storage lives in package db, the
// bucket watcher in package scanner, post-processing in package postproc, and
// the GraphQL API in packages graph and resolvers; each of those speaks in the
// types defined here.
package cascade
