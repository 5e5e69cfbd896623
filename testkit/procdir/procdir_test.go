package procdir

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestNewRemovesWhatEndedProcessesLeft: a directory of a process that has
// ended goes, one of a running process (this one) and one of another
// name stay.
func TestNewRemovesWhatEndedProcessesLeft(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const prefix = "procdir-test-"
	ended := 4_194_000 // below Linux's largest pid_max: a process id no process has
	for alive(ended) {
		ended--
	}
	gone := filepath.Join(os.TempDir(), prefix+strconv.Itoa(ended)+"-1")
	kept := filepath.Join(os.TempDir(), prefix+strconv.Itoa(os.Getpid())+"-1")
	other := filepath.Join(os.TempDir(), prefix+"notapid")
	for _, d := range []string{gone, kept, other} {
		if err := os.MkdirAll(filepath.Join(d, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := New(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != os.TempDir() || filepath.Base(dir)[:len(prefix)] != prefix {
		t.Errorf("made %s", dir)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("%s, of an ended process, is still there (%v)", gone, err)
	}
	for _, d := range []string{kept, other, dir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}
