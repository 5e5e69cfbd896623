package testkit

import "testing"

// SkipShort skips the test under go test -short, saying why it belongs to
// the full suite: "full suite: " and what, what it starts ("runs /bin/sh",
// "starts the server"). The short tier (go test -short ./...) runs only
// tests that start no server, cluster, browser, child process or external
// service and do not sleep; the harnesses that start those (servertest,
// Program, ServeProcess, slurmtest, dbtest's PostgreSQL) call it
// themselves, and a test that starts one by other means calls it first.
// Without -short the test runs as before.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("full suite: " + what)
	}
}
