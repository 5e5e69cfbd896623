package proc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
)

// TestOOMKillsIn: the OOM killer's count is read from the process's
// cgroup, memory.events under cgroup v2 and memory.oom_control under v1;
// without either file it is unknown.
func TestOOMKillsIn(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		path = filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("user.slice/cascade.service/memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\noom_group_kill 0\n")
	write("unified/nested/memory.events", "oom 1\noom_kill 1\n")
	write("memory/process_api/abc/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	write("broken/memory.events", "oom_kill many\n")
	for _, c := range []struct {
		name, self string
		want       int64
		ok         bool
	}{
		{"v2", "0::/user.slice/cascade.service\n", 2, true},
		{"v2 hybrid", "1:name=systemd:/\n0::/nested\n", 1, true},
		{"v1", "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n", 3, true},
		{"no file", "0::/elsewhere\n", 0, false},
		{"not a number", "0::/broken\n", 0, false},
		{"empty", "", 0, false},
	} {
		n, ok := oomKillsIn(root, c.self)
		if n != c.want || ok != c.ok {
			t.Errorf("%s: %d %v, want %d %v", c.name, n, ok, c.want, c.ok)
		}
	}
	// A rise of the count between a process's start and its exit is the
	// OOM killer's.
	write("memory/process_api/abc/memory.oom_control", "oom_kill 4\n")
	if n, _ := oomKillsIn(root, "4:memory:/process_api/abc\n"); n <= 3 {
		t.Errorf("after a kill: %d, want more than 3", n)
	}
}

// TestRunOOMKilled: a program that dies of a SIGKILL Run did not send
// while the cgroup's OOM kill count rises is OOMKilled; one whose count
// stays, or that Run itself killed, is not. The count is a fake file the
// program raises itself before it kills itself.
func TestRunOOMKilled(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no cgroups: %v", err)
	}
	root := t.TempDir()
	old := cgroupRoot
	cgroupRoot = root
	t.Cleanup(func() { cgroupRoot = old })
	var files []string
	for _, line := range strings.Split(string(self), "\n") {
		f := strings.SplitN(line, ":", 3)
		switch {
		case len(f) == 3 && f[1] == "memory":
			files = append(files, filepath.Join(root, "memory", f[2], "memory.oom_control"))
		case len(f) == 3 && f[0] == "0":
			files = append(files, filepath.Join(root, f[2], "memory.events"), filepath.Join(root, "unified", f[2], "memory.events"))
		}
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("oom_kill 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := oomKills(); !ok {
		t.Fatalf("fake count not read from %v", files)
	}
	raise := `for f in "$@"; do echo "oom_kill $N" > "$f"; done; kill -KILL $$`
	for _, c := range []struct {
		name, count string
		want        bool
	}{
		{"count rose", "1", true},
		{"count stayed", "1", false}, // the previous case left 1
	} {
		args := append([]string{"sh", "-c", raise, "sh"}, files...)
		res, err := Run(context.Background(), Cmd{Args: args, Env: []string{"N=" + c.count}, Log: filepath.Join(t.TempDir(), "log")})
		if err != nil {
			t.Fatal(err)
		}
		if res.Signal != "killed" || res.OOMKilled != c.want {
			t.Errorf("%s: %+v, want killed, OOMKilled %v", c.name, res, c.want)
		}
	}
	// Killed by Run (a cancel past its grace) while the count rises: not the
	// OOM killer's.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// It prints once it raised the count: its output's arrival cancels.
	args := append([]string{"sh", "-c", `trap '' TERM; for f in "$@"; do echo "oom_kill 2" > "$f"; done; echo raised; while :; do sleep 0.05; done`, "sh"}, files...)
	res, _ := Run(ctx, Cmd{Args: args, Log: filepath.Join(t.TempDir(), "log"), Grew: cancel, Grace: 50 * time.Millisecond})
	if res.Signal != "killed" || res.OOMKilled || res.OOMUnknown {
		t.Errorf("cancelled: %+v, want killed, not OOMKilled, not OOMUnknown", res)
	}

	// No count to read: a SIGKILL from outside is OOMUnknown, neither
	// said to be the OOM killer's nor not.
	cgroupRoot = t.TempDir()
	res, err = Run(context.Background(), Cmd{Args: []string{"sh", "-c", "kill -KILL $$"}, Log: filepath.Join(t.TempDir(), "log")})
	if err != nil || res.Signal != "killed" || res.OOMKilled || !res.OOMUnknown {
		t.Errorf("unreadable count: %+v, %v; want killed, OOMUnknown", res, err)
	}
}
