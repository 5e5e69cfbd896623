package lockfile

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestHold: a second Hold of a held file fails with ErrHeld, saying what
// the holder wrote; once the first closes it, it is held again.
func TestHold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, _, err := Hold(path, "pid 1, here")
	if err != nil {
		t.Fatal(err)
	}
	if _, who, err := HoldWithin(path, "pid 2", 0); !errors.Is(err, ErrHeld) || who != "pid 1, here" {
		t.Fatalf("second Hold: %q, %v; want ErrHeld by the first", who, err)
	}
	first.Close()
	again, _, err := Hold(path, "pid 3")
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}

// TestHoldWaitsAMoment: a lock let go within the wait is taken (a forked
// child holds a closed lock until its exec: a server restarted at once
// found its directory in use, a flaky TestTraceRemovalEndsItsRuns); one
// held on is refused after the wait.
func TestHoldWaitsAMoment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, _, err := Hold(path, "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		first.Close()
	}()
	second, _, err := HoldWithin(path, "pid 2", 5*time.Second)
	if err != nil {
		t.Fatalf("a lock let go after 100 ms: %v", err)
	}
	start := time.Now()
	if _, who, err := HoldWithin(path, "pid 3", 50*time.Millisecond); !errors.Is(err, ErrHeld) || who != "pid 2" || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("a lock held on: %q, %v after %v", who, err, time.Since(start))
	}
	second.Close()
}
