// Package servertest runs the real server (package app) on a free port
// with a temporary data directory, and speaks to it as users' clients do:
// GraphQL over HTTP and subscriptions over real websockets. Each server
// is the test's own, in the test's process ([Server]); [ForEachServer]
// runs a test against one on SQLite and, with CASCADE_TEST_POSTGRES_DSN
// set, one on PostgreSQL.
package servertest
