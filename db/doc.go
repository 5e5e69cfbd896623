// Package db is Cascade's storage: it opens SQLite or PostgreSQL through
// GORM, migrates the schema, and runs the queries the other packages need.
//
// It owns connections and transactions, not rules: it never decides a
// trace's state and never publishes events. It is the server's only
// package that imports gorm (the harness testkit/dbtest uses it to make
// and drop PostgreSQL schemas for tests); callers speak in package
// cascade's types and get *cascade.Error values (NOT_FOUND,
// BAD_USER_INPUT) where a caller can act.
//
// A trace's kernels live in kernel sets: kernels.go reads them a page at
// a time, kernelingest.go writes a new list in bulk (pgcopy.go,
// sqlitebulk.go), and kernelsets.go swaps a trace to it and deletes the
// sets no trace points at. sampling.go stores sampling plans, a row a
// stratum with its members in one blob.
package db
