// Package db is Cascade's storage: it opens SQLite or PostgreSQL through
// GORM, migrates the schema, and runs the queries the other packages need.
//
// It owns connections and transactions, not rules: it never decides a
// trace's state and never publishes events. It is the only package that
// imports gorm; callers speak in package cascade's types and get
// *cascade.Error values (NOT_FOUND, BAD_USER_INPUT) where a caller can act.
package db
