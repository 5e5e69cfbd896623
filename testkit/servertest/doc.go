// Package servertest runs the real server (package app) on a free port
// with a temporary data directory, and speaks to it as users' clients do:
// GraphQL over HTTP and subscriptions over real websockets. Tests that
// import it belong to the full suite: each skips under go test -short.
package servertest
