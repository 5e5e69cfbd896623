// Package testutil holds what Cascade's tests share: fresh databases on
// SQLite and PostgreSQL, a real server on a free port, and waiting on a
// condition without sleeping blindly.
package testutil
