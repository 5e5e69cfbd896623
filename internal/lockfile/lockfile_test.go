package lockfile

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestHold: a second Hold of a held file fails with ErrHeld, saying what
// the holder wrote; once the first closes it, it is held again.
func TestHold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, _, err := Hold(path, "pid 1, here")
	if err != nil {
		t.Fatal(err)
	}
	if _, who, err := Hold(path, "pid 2"); !errors.Is(err, ErrHeld) || who != "pid 1, here" {
		t.Fatalf("second Hold: %q, %v; want ErrHeld by the first", who, err)
	}
	first.Close()
	again, _, err := Hold(path, "pid 3")
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}
