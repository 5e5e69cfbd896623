package posttraces

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// insertLine returns text with line inserted before 1-based line n.
func insertLine(text string, n int, line string) string {
	lines := strings.SplitAfter(text, "\n")
	return strings.Join(lines[:n-1], "") + line + "\n" + strings.Join(lines[n-1:], "")
}

// TestErrors checks that each bad input fails naming its file and line,
// writes no kernelslist.g, and leaves no spill or temporary file behind.
func TestErrors(t *testing.T) {
	classic, err := os.ReadFile("testdata/golden/classic/in/kernel-1.trace")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		xz    string
		want  []string
	}{
		{
			name: "truncated xz (xz binary)",
			setup: func(t *testing.T, dir string) {
				truncatedXZ(t, dir)
			},
			want: []string{"kernel-1.trace.xz", "after line"},
		},
		{
			name:  "truncated xz (pure Go)",
			setup: func(t *testing.T, dir string) { truncatedXZ(t, dir) },
			xz:    "-",
			want:  []string{"kernel-1.trace.xz", "after line", "unexpected EOF"},
		},
		{
			name: "line fitting neither layout",
			setup: func(t *testing.T, dir string) {
				bad := insertLine(string(classic), 20, "0 0 0 0 0 0 0010 ffffffff 0 EXIT 0 0")
				writeFile(t, dir, "kernel-1.trace", bad)
				writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			},
			want: []string{"kernel-1.trace:20:", "fits neither layout"},
		},
		{
			name: "first instruction line fitting neither layout",
			setup: func(t *testing.T, dir string) {
				bad := insertLine(string(classic), 16, "0 1 0 0 R1 ffffffff 0 EXIT 0 0")
				writeFile(t, dir, "kernel-1.trace", bad)
				writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			},
			want: []string{"kernel-1.trace:16:", "fits neither layout"},
		},
		{
			name: "11-id line in a 4-id file",
			setup: func(t *testing.T, dir string) {
				bad := insertLine(string(classic), 18, "0 0 0 0 0 0 0 0 0 0 0 0010 ffffffff 0 EXIT 0 0")
				writeFile(t, dir, "kernel-1.trace", bad)
				writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			},
			want: []string{"kernel-1.trace:18:", "fits neither layout"},
		},
		{
			name: "warp outside the block",
			setup: func(t *testing.T, dir string) {
				bad := insertLine(string(classic), 17, "0 0 0 3 0010 ffffffff 0 EXIT 0 0")
				writeFile(t, dir, "kernel-1.trace", bad)
				writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			},
			want: []string{"kernel-1.trace:17:", "warp 3"},
		},
		{
			name: "missing kernel file",
			setup: func(t *testing.T, dir string) {
				writeFile(t, dir, "kernel-1.trace", string(classic))
				writeFile(t, dir, "kernelslist", "kernel-1.trace\nMemcpyHtoD,0x0000000000000001,8\nkernel-2.trace\n")
				writeFile(t, dir, "kernelslist.g", "kernel-1.tracez\n") // stale, from an earlier run
			},
			want: []string{"kernelslist:3:", "kernel-2.trace", "no such file"},
		},
		{
			name: "two traces for one output",
			setup: func(t *testing.T, dir string) {
				writeFile(t, dir, "kernel-1.trace", string(classic))
				writeFile(t, dir, "kernel-1.trace.xz", "")
				writeFile(t, dir, "kernelslist", "kernel-1.trace\nkernel-1.trace.xz\n")
			},
			want: []string{"kernelslist", "kernel-1.tracez"},
		},
		{
			name: "undefined list command",
			setup: func(t *testing.T, dir string) {
				writeFile(t, dir, "kernelslist", "\nbogus\n")
			},
			want: []string{"kernelslist:2:", "undefined command"},
		},
		{
			name: "second kernel bad, first fine",
			setup: func(t *testing.T, dir string) {
				writeFile(t, dir, "kernel-1.trace", string(classic))
				writeFile(t, dir, "kernel-2.trace", insertLine(string(classic), 30, "garbage"))
				writeFile(t, dir, "kernelslist", "kernel-1.trace\nkernel-2.trace\n")
				writeFile(t, dir, "kernelslist.g", "kernel-1.tracez\nkernel-2.tracez\n") // stale
			},
			want: []string{"kernel-2.trace:30:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.xz == "" && strings.Contains(tc.name, "xz binary") {
				testkit.SkipShort(t, "runs xz")
				if _, err := exec.LookPath("xz"); err != nil {
					t.Fatal("xz is not installed; scripts/deps.sh installs it")
				}
			}
			dir, work := t.TempDir(), t.TempDir()
			tc.setup(t, dir)
			err := Run(context.Background(), dir, Options{Jobs: 2, XZ: tc.xz, WorkDir: work})
			if err == nil {
				t.Fatal("Run succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			assertEmptyDir(t, work)
			assertNotReady(t, dir)
		})
	}
}

// assertNotReady checks that dir has no kernelslist.g and no temporary output.
func assertNotReady(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".g") {
			t.Errorf("left in traces dir: %s", e.Name())
		}
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// truncatedXZ writes a kernel trace .xz cut in the middle of its stream.
func truncatedXZ(t *testing.T, dir string) {
	t.Helper()
	if _, err := tracegen.Generate(context.Background(), dir, tracegen.Config{Grid: [3]int{8, 1, 1}, Insts: 200, Mem: true, XZ: true, XZBin: "-", Seed: 7}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "kernel-1.trace.xz")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// TestCancel checks that a cancelled run stops and removes its spill files
// and temporary outputs. Its second kernel comes through a named pipe that
// never ends, so the run is under way and cannot finish before the cancel:
// the pipe's writer cancels once the run has read some of it, and feeds it
// until the run lets go.
func TestCancel(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	if _, err := tracegen.Generate(context.Background(), dir, tracegen.Config{Grid: [3]int{64, 1, 1}, Block: [3]int{256, 1, 1}, Bytes: 4 << 20, Mem: true, Seed: 8}); err != nil {
		t.Fatal(err)
	}
	classic, err := os.ReadFile("testdata/golden/classic/in/kernel-1.trace")
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(classic), "\n0 ")
	fifo := filepath.Join(dir, "kernel-2.trace")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := os.OpenFile(filepath.Join(dir, "kernelslist"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	list.WriteString("kernel-2.trace\n")
	list.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fed := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // until the run opens it
		if err != nil {
			fed <- err
			return
		}
		defer f.Close()
		if _, err := f.WriteString(header + "\n"); err != nil {
			fed <- err
			return
		}
		line := []byte(strings.Repeat("0 0 0 0 0000 ffffffff 1 R1 S2R 0 0\n", 1000))
		for i := 0; ; i++ {
			if i == 10 {
				cancel()
			}
			if _, err := f.Write(line); err != nil {
				fed <- nil // the run closed the pipe
				return
			}
		}
	}()
	err = Run(ctx, dir, Options{Jobs: 2, WorkDir: work, MaxPartMem: 1 << 20})
	// A run that failed before it opened the pipe leaves its writer waiting.
	if r, oerr := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); oerr == nil {
		r.Close()
	}
	if ferr := <-fed; ferr != nil {
		t.Fatalf("feeding the pipe: %v", ferr)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertEmptyDir(t, work)
	assertNotReady(t, dir)
}

// TestMain runs the package's tests, or, when re-executed by a benchmark
// with CASCADE_TRACEPROC_CHILD set, the post-processor itself.
func TestMain(m *testing.M) {
	if args := os.Getenv("CASCADE_TRACEPROC_CHILD"); args != "" {
		os.Exit(Main(context.Background(), strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestMainCommand(t *testing.T) {
	classic, _ := os.ReadFile("testdata/golden/classic/in/kernel-1.trace")
	cases := []struct {
		name     string
		args     func(dir string) []string
		code     int
		stderr   string
		makeList bool
	}{
		{name: "OK", args: func(d string) []string { return []string{d, "-j", "2"} }, code: 0},
		{name: "OK text jN", args: func(d string) []string { return []string{"--text", "-j2", d} }, code: 0},
		{name: "OK list file", args: func(d string) []string { return []string{filepath.Join(d, "kernelslist"), "-j=1"} }, code: 0},
		{name: "ErrNoTarget", args: func(string) []string { return []string{"-j", "2"} }, code: 2, stderr: "missing"},
		{name: "ErrBadJobs", args: func(d string) []string { return []string{d, "-j", "zero"} }, code: 2, stderr: "-j"},
		{name: "ErrUnknownFlag", args: func(d string) []string { return []string{d, "--fast"} }, code: 2, stderr: "unknown flag"},
		{name: "ErrMissingDir", args: func(d string) []string { return []string{filepath.Join(d, "nope")} }, code: 1, stderr: "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, work := t.TempDir(), filepath.Join(t.TempDir(), "work")
			t.Setenv("CASCADE_WORK_DIR", work) // created on demand
			writeFile(t, dir, "kernel-1.trace", string(classic))
			writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			var stdout, stderr bytes.Buffer
			if code := Main(context.Background(), tc.args(dir), &stdout, &stderr); code != tc.code {
				t.Fatalf("code = %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.stderr)
			}
			if tc.code == 0 {
				if _, err := os.Stat(filepath.Join(dir, "kernelslist.g")); err != nil {
					t.Error(err)
				}
				assertEmptyDir(t, work)
			}
		})
	}
}

func TestSubchunkEnv(t *testing.T) {
	classic, _ := os.ReadFile("testdata/golden/classic/in/kernel-1.trace")
	cases := []struct {
		name, env string
		want      uint32
		err       bool
	}{
		{name: "default", want: 2048},
		{name: "set", env: "3", want: 3},
		{name: "ErrNotANumber", env: "many", err: true},
		{name: "ErrZero", env: "0", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "kernel-1.trace", string(classic))
			writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			t.Setenv("TRACEZ_SUBCHUNK_INSTS", tc.env)
			err := Run(context.Background(), dir, Options{WorkDir: t.TempDir()})
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), "TRACEZ_SUBCHUNK_INSTS") {
					t.Fatalf("err = %v, want a TRACEZ_SUBCHUNK_INSTS error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := tracez.Open(filepath.Join(dir, "kernel-1.tracez"))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.SubchunkInsts != tc.want {
				t.Errorf("subchunk_insts = %d, want %d", r.SubchunkInsts, tc.want)
			}
			if n := len(r.Blocks[1].Warps[0].Subchunks); tc.want == 3 && n != 2 {
				t.Errorf("a 4-instruction warp has %d subchunks, want 2", n)
			}
		})
	}
}
