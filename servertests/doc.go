// Package servertests holds the full tier's tests that start a real
// server (testkit/servertest) for the packages beneath it: a trace's way
// in, through the S3 endpoint (s3gw_*) by real clients and the uploader
// (upload_*), the scanner (scanner_*) and post-processing (postproc_*),
// and the GraphQL API, its handler (graph_*), HTTP and websockets
// (transport_*) and resolvers' subscriptions (resolvers_*), each file
// named after the package it tests. Runs' and sampled runs' are in
// servertests/runs. go test -short skips them all.
//
// They live here, not beside the code they test, so that the fast tier
// links the whole server into as few test binaries as it can: a test
// binary is linked on every go test, even when -short skips every test
// in it, and one that links the server costs about 2 CPU-s. For the same
// reason this directory is a module of its own: go test -short ./... at
// the root does not link its two test binaries at all. Its go.work puts
// it beside the root module (replace in go.mod, for a go command run here
// without the workspace): scripts/test.sh runs them with
// GOWORK=servertests/go.work, and go test ./... run in this directory
// finds the go.work itself. The package itself is empty; its tests are
// servertests_test.
package servertests
