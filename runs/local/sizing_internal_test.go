package local

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const gib64 = int64(1) << 30

// TestFits: a simulation starts when what it needs is available beside
// what the running ones may yet grow by, and always when none runs.
func TestFits(t *testing.T) {
	for _, tt := range []struct {
		name      string
		need      int64
		available int64
		running   []sim
		want      bool
	}{
		{"none runs, plenty", gib64, 8 * gib64, nil, true},
		{"none runs, too big: tried alone", 16 * gib64, 8 * gib64, nil, true},
		{"one running at its reserve", 2 * gib64, 3 * gib64, []sim{{reserved: 2 * gib64, resident: 2 * gib64}}, true},
		// The running one holds 0.5 of its 2 GiB: it may take 1.5 more
		// of the 3 available, which leaves 1.5, less than the 2 asked.
		{"one running that may grow", 2 * gib64, 3 * gib64, []sim{{reserved: 2 * gib64, resident: gib64 / 2}}, false},
		{"exactly what is left", gib64 + gib64/2, 3 * gib64, []sim{{reserved: 2 * gib64, resident: gib64 / 2}}, true},
		// Past its reserve it takes nothing more off: what it holds is in
		// available already.
		{"one running past its reserve", 2 * gib64, 2 * gib64, []sim{{reserved: gib64, resident: 3 * gib64}}, true},
		{"two running", gib64, 3 * gib64, []sim{{reserved: gib64, resident: 0}, {reserved: gib64, resident: 0}}, true},
		{"two running, one byte short", gib64 + 1, 3 * gib64, []sim{{reserved: gib64, resident: 0}, {reserved: gib64, resident: 0}}, false},
		{"nothing available", 1, 0, []sim{{reserved: 1, resident: 1}}, false},
	} {
		if got := fits(tt.need, tt.available, tt.running); got != tt.want {
			t.Errorf("%s: fits(%d, %d, %v) = %v, want %v", tt.name, tt.need, tt.available, tt.running, got, tt.want)
		}
	}
}

// TestNeedAndSlots: a recorded peak is needed with an eighth more, none
// is DefaultPeakRSS; a set concurrency wins over the CPUs.
func TestNeedAndSlots(t *testing.T) {
	if got := need(0); got != DefaultPeakRSS {
		t.Errorf("need(0) = %d, want DefaultPeakRSS", got)
	}
	if got := need(8 << 20); got != 9<<20 {
		t.Errorf("need(8 MiB) = %d, want 9 MiB", got)
	}
	for _, tt := range []struct{ conc, cpus, want int }{{0, 4, 4}, {3, 16, 3}, {1, 2, 1}, {0, 1, 1}} {
		if got := slots(tt.conc, tt.cpus); got != tt.want {
			t.Errorf("slots(%d, %d) = %d, want %d", tt.conc, tt.cpus, got, tt.want)
		}
	}
	if got := slots(0, 0); got < 1 {
		t.Errorf("slots(0, 0) = %d, want GOMAXPROCS", got)
	}
}

// TestMemAvailable: /proc/meminfo's MemAvailable in bytes; a file
// without it, or with a value that is no number of kB, is an error
// naming the line.
func TestMemAvailable(t *testing.T) {
	got, err := memAvailable([]byte("MemTotal:       24683744 kB\nMemFree:         1000 kB\nMemAvailable:   23688708 kB\n"))
	if err != nil || got != 23688708<<10 {
		t.Fatalf("memAvailable = %d, %v", got, err)
	}
	for in, want := range map[string]string{
		"MemTotal: 1 kB\n":                     "no MemAvailable",
		"MemTotal: 1 kB\nMemAvailable: x kB\n": "line 2: MemAvailable",
		"MemAvailable: 12 MB\n":                "line 1: MemAvailable",
		"MemAvailable: -5 kB\n":                "line 1",
	} {
		if _, err := memAvailable([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("memAvailable(%q): %v, want an error with %q", in, err, want)
		}
	}
}

// TestCgroupFree: a cgroup's limit less its use beyond its inactive file
// pages, under v2 and v1, in the cgroup's directory or at the mount's
// root; no limit is none.
func TestCgroupFree(t *testing.T) {
	write := func(dir string, files map[string]string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, s := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	root := t.TempDir()
	write(filepath.Join(root, "srv"), map[string]string{"memory.max": "4294967296\n", "memory.current": "2147483648\n",
		"memory.stat": "anon 1000\ninactive_file 1073741824\nactive_file 5\n"})
	if free, from, ok := cgroupFree(root, "0::/srv\n"); !ok || free != 3*gib64 || !strings.Contains(from, "memory.max") {
		t.Errorf("v2: %d, %q, %v; want 3 GiB", free, from, ok)
	}
	write(filepath.Join(root, "nolimit"), map[string]string{"memory.max": "max\n", "memory.current": "1\n"})
	if _, _, ok := cgroupFree(root, "0::/nolimit\n"); ok {
		t.Error("v2 without a limit: ok")
	}

	// v1, seen from inside a container: /proc/self/cgroup names the
	// host's path, the mount's root is the container's cgroup.
	v1 := t.TempDir()
	write(filepath.Join(v1, "memory"), map[string]string{"memory.limit_in_bytes": "2147483648\n", "memory.usage_in_bytes": "1610612736\n",
		"memory.stat": "cache 5\ntotal_inactive_file 536870912\n"})
	if free, _, ok := cgroupFree(v1, "5:devices:/x\n4:memory:/process_api/abc\n"); !ok || free != gib64 {
		t.Errorf("v1: %d, %v; want 1 GiB", free, ok)
	}
	write(filepath.Join(v1, "memory"), map[string]string{"memory.limit_in_bytes": "9223372036854771712\n"})
	if _, _, ok := cgroupFree(v1, "4:memory:/process_api/abc\n"); ok {
		t.Error("v1 without a limit: ok")
	}
	if _, _, ok := cgroupFree(t.TempDir(), "0::/\n"); ok {
		t.Error("no cgroup files: ok")
	}
}

// TestResidentBytes: this process's resident memory is read; a process
// that is not there holds none.
func TestResidentBytes(t *testing.T) {
	if got := residentBytes(os.Getpid()); got < 1<<20 {
		t.Errorf("residentBytes(self) = %d, want at least 1 MiB", got)
	}
	if got := residentBytes(1 << 30); got != 0 {
		t.Errorf("residentBytes(no such pid) = %d, want 0", got)
	}
}

// TestGate: a simulation that does not fit waits until one ends, or until
// its run waits no longer; one admitted is counted until done; memory that
// cannot be read holds nothing back.
func TestGate(t *testing.T) {
	avail := 3 * gib64
	g := newGate(func() (Memory, error) { return Memory{Available: avail, From: "test"}, nil }, slog.New(slog.DiscardHandler))
	g.poll = 10 * time.Millisecond
	ctx := context.Background()
	always := func() bool { return true }
	if !g.admit(ctx, "a", 2*gib64, always) {
		t.Fatal("the first is not admitted")
	}
	admitted := make(chan bool)
	go func() { admitted <- g.admit(ctx, "b", 2*gib64, always) }()
	select {
	case <-admitted:
		t.Fatal("b admitted beside a: 4 GiB of 3")
	case <-time.After(100 * time.Millisecond):
	}
	g.done("a")
	if !<-admitted {
		t.Fatal("b not admitted once a was done")
	}
	// c does not fit beside b; its run is cancelled while it waits.
	start := time.Now()
	if g.admit(ctx, "c", 2*gib64, func() bool { return false }) {
		t.Fatal("c admitted beside b")
	}
	if time.Since(start) > 100*g.poll { // one poll, with room for a loaded machine
		t.Errorf("c waited %v after its run no longer waited", time.Since(start))
	}
	g.mu.Lock()
	_, counted := g.running["c"]
	g.mu.Unlock()
	if counted {
		t.Error("c counted as running")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if g.admit(cancelled, "d", 2*gib64, always) {
		t.Fatal("d admitted beside b with its context done")
	}
	broken := newGate(func() (Memory, error) { return Memory{}, errors.New("no /proc") }, slog.New(slog.DiscardHandler))
	for _, id := range []string{"x", "y"} {
		if !broken.admit(ctx, id, 100*gib64, always) {
			t.Fatalf("%s held back by memory that cannot be read", id)
		}
	}
}
