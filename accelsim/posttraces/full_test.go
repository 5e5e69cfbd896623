package posttraces

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// TestDiskFull runs out of room on a small tmpfs, writing the outputs or
// the spill files: the run fails with a *FullError naming what it was
// writing, and leaves neither outputs (those of kernels already done
// included), temporary files nor spill files, so the room is free again.
func TestDiskFull(t *testing.T) {
	for _, c := range []struct {
		name      string
		fullSpill bool // the spill files on the small disk, else the outputs
		want      string
	}{
		{"Outputs", false, "no space left on device writing traces/kernel-2.tracez"},
		{"Spill", true, "no space left on device writing the spill files of traces/kernel-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			small := filepath.Join(root, "small")
			testkit.SmallDisk(t, small, "16m")
			dir, work := filepath.Join(small, "trace", "traces"), filepath.Join(root, "work")
			if c.fullSpill {
				dir, work = filepath.Join(root, "trace", "traces"), filepath.Join(small, "work")
			}
			// Four kernels of 2 MiB raw: each spills about its size and
			// writes about a fifth of it. With the outputs on the small disk,
			// a file fills it but for room for one output or two; with the
			// spill files there, one kernel's spill does not fit.
			size := int64(2 << 20)
			if c.fullSpill {
				size = 20 << 20
			}
			if _, err := tracegen.Generate(context.Background(), dir, tracegen.Config{Kernels: 4, Bytes: size, Mem: true, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			if !c.fullSpill {
				// Leave the outputs room for a kernel or two only.
				fill := filepath.Join(small, "fill")
				if err := os.WriteFile(fill, make([]byte, freeBytes(t, small)-700<<10), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := usedBytes(t, small)
			// One kernel at a time: kernel-1's output fits, kernel-2's not.
			err := Run(context.Background(), dir, Options{Jobs: 1, WorkDir: work})
			var fe *FullError
			if !errors.As(err, &fe) || !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("err = %v, want a FullError starting %q", err, c.want)
			}
			if c.fullSpill && !strings.HasSuffix(err.Error(), " in "+work) {
				t.Errorf("err = %v, want it to say where the spill files were", err)
			}
			assertEmptyDir(t, work)
			assertNotReady(t, dir)
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tracez") {
					t.Errorf("output %s left after the failure", e.Name())
				}
			}
			if after := usedBytes(t, small); after > before {
				t.Errorf("the small disk holds %d bytes after the failed run, %d before", after, before)
			}
		})
	}
}

// freeBytes is how much room the file system holding dir has left.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// usedBytes is how much of the file system holding dir is in use.
func usedBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}
