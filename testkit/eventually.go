package testkit

import (
	"testing"
	"time"
)

// Eventually calls cond until it returns true, failing the test with msg if
// it has not within timeout. It polls every 10 ms at first, then less
// often, up to every pollMax (poll): use it for state on disk or in a
// database, and a subscription for anything that sends events.
func Eventually(t testing.TB, timeout time.Duration, msg string, cond func() bool) {
	t.Helper()
	if _, ok := await(timeout, func() (bool, string) { return cond(), "" }); !ok {
		t.Fatalf("not within %v: %s", timeout, msg)
	}
}

// EventuallySays is Eventually for a cond that also says what it saw: a
// test that fails names the state it was left in (the last seen), not
// only the state it waited for.
func EventuallySays(t testing.TB, timeout time.Duration, msg string, cond func() (bool, string)) {
	t.Helper()
	if seen, ok := await(timeout, cond); !ok {
		t.Fatalf("not within %v: %s; last seen: %s", timeout, msg, seen)
	}
}

// await polls cond until it is true (ok) or timeout has passed, and
// returns what cond last said it saw.
func await(timeout time.Duration, cond func() (bool, string)) (seen string, ok bool) {
	deadline := time.Now().Add(timeout)
	for wait := pollFirst; ; wait = poll(wait) {
		if ok, seen = cond(); ok || time.Now().After(deadline) {
			return seen, ok
		}
		time.Sleep(wait)
	}
}

// The polling interval starts at pollFirst and grows by a quarter a poll
// up to pollMax, which it reaches after about 0.4 s: a condition met
// within a few tenths of a second is seen as soon as before, and a wait
// on a simulation of a minute polls 600 times instead of 6,000. Those
// polls are often GraphQL queries of a run's kernels and statistics, on
// the two cores CI shares between the simulators and every package's
// tests: TestRealAccelSimPower took 80 s of CPU (74 s wall) polling every
// 10 ms, 54 s (42 s wall) with this, most of it the simulator's.
const (
	pollFirst = 10 * time.Millisecond
	pollMax   = 100 * time.Millisecond
)

func poll(wait time.Duration) time.Duration { return min(wait+wait/4, pollMax) }
