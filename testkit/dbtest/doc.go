// Package dbtest opens fresh databases for tests: a SQLite file in the
// test's temporary directory (a copy of one db.Open migrated once per test
// process, see [SeedSQLite]), and, when CASCADE_TEST_POSTGRES_DSN is set,
// a throwaway PostgreSQL schema, each migrated and closed with the test.
package dbtest
