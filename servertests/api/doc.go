// Package api holds the full tier's tests of the GraphQL API that start
// a real server (testkit/servertest): the schema and its handler
// (package graph), HTTP and websockets (package graph/transport) and
// resolvers' subscriptions (package resolvers), spoken to as clients
// do. go test -short skips them all.
//
// They live here, not beside the code they test, so that the fast tier
// links the whole server into as few test binaries as it can: a test
// binary is linked on every run, even when -short skips every test in
// it. Each file is named after the package it tests (graph_*,
// transport_*, resolvers_*). The package itself is empty; its tests are
// api_test.
package api
