package testkit

import (
	"testing"
	"time"
)

// Eventually calls cond until it returns true, failing the test with msg if
// it has not within timeout. It polls every 10 ms: use it for state on disk
// or in a database, and a subscription for anything that sends events.
func Eventually(t testing.TB, timeout time.Duration, msg string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", timeout, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// EventuallySays is Eventually for a cond that also says what it saw: a
// test that fails names the state it was left in (the last seen), not
// only the state it waited for.
func EventuallySays(t testing.TB, timeout time.Duration, msg string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s; last seen: %s", timeout, msg, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
