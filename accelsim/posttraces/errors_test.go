package posttraces

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
			name: "block of more threads than CUDA allows",
			setup: func(t *testing.T, dir string) {
				writeFile(t, dir, "kernel-1.trace", strings.Replace(string(classic), "-block dim = (70,1,1)", "-block dim = (4294967295,1,1)", 1))
				writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			},
			want: []string{"kernel-1.trace:4:", "block (4294967295,1,1) of 4294967295 threads", "at most 1024"},
		},
		{
			name: "a line of megabytes",
			setup: func(t *testing.T, dir string) {
				writeFile(t, dir, "kernel-1.trace", insertLine(string(classic), 20, strings.Repeat("\x00", 3<<20)))
				writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			},
			want: []string{"kernel-1.trace:20:", "a line longer than 1048576 bytes"},
		},
		{
			name: "truncated inside a line",
			setup: func(t *testing.T, dir string) {
				cut := strings.TrimSuffix(string(classic), "\n")
				writeFile(t, dir, "kernel-1.trace", cut[:len(cut)-3])
				writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			},
			want: []string{fmt.Sprintf("kernel-1.trace:%d:", strings.Count(string(classic), "\n")), "without its newline: a truncated file"},
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
// with CASCADE_TRACEPROC_CHILD set, the post-processor itself ([Run] with
// the benchmark's childRun).
func TestMain(m *testing.M) {
	if arg := os.Getenv("CASCADE_TRACEPROC_CHILD"); arg != "" {
		var c childRun
		if err := json.Unmarshal([]byte(arg), &c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := Run(context.Background(), c.Target, Options{Jobs: c.Jobs, Text: c.Text, WorkDir: c.WorkDir}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSubchunkInsts: Options.SubchunkInsts sets the .tracez frame size,
// 2048 instructions when 0. (cmd/cascade's TestPostprocessSubchunkEnv
// checks TRACEZ_SUBCHUNK_INSTS, which sets it for cascade postprocess.)
func TestSubchunkInsts(t *testing.T) {
	classic, _ := os.ReadFile("testdata/golden/classic/in/kernel-1.trace")
	for _, tc := range []struct {
		name string
		sub  int
		want uint32
	}{{"default", 0, 2048}, {"set", 3, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "kernel-1.trace", string(classic))
			writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			if err := Run(context.Background(), dir, Options{WorkDir: t.TempDir(), SubchunkInsts: tc.sub}); err != nil {
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

// TestStaleTempsRemoved: the temporary files a killed run left in the
// traces folder (out of memory, its server killed: no deferred removal
// ran) are removed by the next run; a file of another name stays.
func TestStaleTempsRemoved(t *testing.T) {
	classic, err := os.ReadFile("testdata/golden/classic/in/kernel-1.trace")
	if err != nil {
		t.Fatal(err)
	}
	dir, work := t.TempDir(), t.TempDir()
	writeFile(t, dir, "kernel-1.trace", string(classic))
	writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
	writeFile(t, dir, ".kernel-1.tracez.tmp-2711", "half a kernel")
	writeFile(t, dir, ".kernelslist.g.tmp-99", "half a list")
	writeFile(t, dir, ".notes.tmp-draft", "a user's")
	if err := Run(context.Background(), dir, Options{Jobs: 1, WorkDir: work}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".kernel-1.tracez.tmp-2711", ".kernelslist.g.tmp-99"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".notes.tmp-draft")); err != nil {
		t.Errorf("a file not of a run's: %v", err)
	}
}

// TestKernelTraceGone: a kernel trace that is gone when its turn comes
// (removed after the list was read) is named once, as a kernel trace,
// which is what the server's hint to upload it again looks for
// (postproc's forUser); it was "open <path>: open <path>: ...".
func TestKernelTraceGone(t *testing.T) {
	p, err := newProcessor(Options{Jobs: 1, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kernel-4.trace")
	_, err = p.partition(context.Background(), path, t.TempDir())
	if want := "kernel trace " + path + ": no such file or directory"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
