// Package cascade holds the domain types every other package shares:
// traces and their kernels, runs and their kernel results, a run's
// comparison with measured timing and its step projections, tested sim
// configs, disk usage, their states, the typed errors the API reports, and
// the API's tokens and the roles they grant. Each is one type, from the
// package that produces it to the GraphQL API that binds it.
//
// It imports only the standard library. Storage lives in package db, the
// bucket watcher in package scanner, post-processing in package postproc,
// simulation in package runs, Accel-Sim's formats under accelsim/, and
// the GraphQL API in packages graph and resolvers; each of those speaks in
// the types defined here.
package cascade
