package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/upload"
)

// TestCommandsSplitLikeAShell: CASCADE_SIM_CMD and CASCADE_POSTPROCESS_CMD
// are split by POSIX shell rules, and a line that is not a command is
// refused with the setting named.
func TestCommandsSplitLikeAShell(t *testing.T) {
	t.Setenv("SIM_HOME", "/opt/accel sim")
	cases := []struct {
		name, line string
		want       []string
		err        string
	}{
		{name: "Plain", line: "accel-sim.out", want: []string{"accel-sim.out"}},
		{name: "SingleQuotes", line: `'/opt/accel sim/accel-sim.out' -x`, want: []string{"/opt/accel sim/accel-sim.out", "-x"}},
		{name: "DoubleQuotes", line: `env "A=b c" /bin/sim`, want: []string{"env", "A=b c", "/bin/sim"}},
		{name: "Backslash", line: `/opt/accel\ sim/accel-sim.out`, want: []string{"/opt/accel sim/accel-sim.out"}},
		{name: "Variable", line: `"$SIM_HOME/accel-sim.out"`, want: []string{"/opt/accel sim/accel-sim.out"}},
		{name: "ErrUnterminated", line: `'/opt/accel sim`, err: "/opt/accel sim"},
		{name: "ErrCommandSubstitution", line: `$(rm -rf /tmp/x)`, err: "rm -rf"},
		{name: "ErrEmpty", line: `  `, err: "names no program"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, flag := range []string{"--sim-cmd", "--postprocess-cmd"} {
				cfg, _, _, err := parseServe([]string{flag, c.line}, &bytes.Buffer{})
				got := cfg.SimCmd
				if flag == "--postprocess-cmd" {
					got = cfg.PostprocessCmd
				}
				switch {
				case c.err == "" && err != nil:
					t.Fatalf("%s %q: %v", flag, c.line, err)
				case c.err != "" && (err == nil || !strings.Contains(err.Error(), flag) || !strings.Contains(err.Error(), c.err)):
					t.Fatalf("%s %q: error %v, want one naming %s and saying %q", flag, c.line, err, flag, c.err)
				case c.err == "" && !slices.Equal(got, c.want):
					t.Fatalf("%s %q: %q, want %q", flag, c.line, got, c.want)
				}
			}
		})
	}
	if _, _, _, err := parseServe([]string{"--postprocess-jobs", "-1"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "CASCADE_POSTPROCESS_JOBS") {
		t.Fatalf("negative jobs: %v", err)
	}
}

// spacedCopy copies the program at src to a directory whose name, and its
// own, hold a space, and returns the copy's path quoted for a shell.
func spacedCopy(t *testing.T, src, name string) (path, quoted string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "my tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, "'" + path + "'"
}

// writeRaw writes a raw one-kernel trace (no kernelslist.g) into the
// bucket under prefix, metadata.json last.
func writeRaw(t *testing.T, prefix, id string) {
	t.Helper()
	files := map[string]string{
		"traces/kernel-1-ctx_0x1.trace": "-kernel name = k\n",
		"traces/kernelslist_ctx_0x1":    "kernel-1-ctx_0x1.trace\n",
		"traces/stats_ctx_0x1":          "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\nkernel-1-ctx_0x1.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, 1,1\n",
	}
	var list []map[string]any
	for p, d := range files {
		testkit.WriteFileAtomic(t, filepath.Join(prefix, id, p), []byte(d))
		list = append(list, map[string]any{"path": p, "size": len(d)})
	}
	meta, _ := json.Marshal(map[string]any{"files": list})
	testkit.WriteFileAtomic(t, filepath.Join(prefix, id, "metadata.json"), meta)
}

// TestPostprocessorGetsItsShareOfCPUs runs `cascade serve` as users do,
// with CASCADE_POSTPROCESS_CMD naming a post-processor whose path holds
// spaces, and checks the -j each post-processor receives: the CPUs the
// server may use as the Go runtime sees them (GOMAXPROCS here stands in
// for a cgroup quota, which runtime.NumCPU ignores), shared among
// CASCADE_POSTPROCESS_CONCURRENCY post-processors, or
// CASCADE_POSTPROCESS_JOBS when set.
func TestPostprocessorGetsItsShareOfCPUs(t *testing.T) {
	t.Parallel()
	fakepp := testkit.Program(t, "./testkit/fakepp")
	one := max(1, runtime.NumCPU()-1) // fewer than NumCPU when there are 2 or more
	cases := []struct {
		name   string
		env    []string
		traces int
		want   []string // -j values, sorted
	}{
		{name: "GOMAXPROCS", env: []string{fmt.Sprintf("GOMAXPROCS=%d", one)}, traces: 1, want: []string{fmt.Sprint(one)}},
		{name: "SharedAmongConcurrent", env: []string{"GOMAXPROCS=3", "CASCADE_POSTPROCESS_CONCURRENCY=2"}, traces: 2, want: []string{"1", "2"}},
		{name: "Jobs", env: []string{"GOMAXPROCS=3", "CASCADE_POSTPROCESS_CONCURRENCY=2", "CASCADE_POSTPROCESS_JOBS=5"}, traces: 2, want: []string{"5", "5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, quoted := spacedCopy(t, fakepp, "fake pp")
			record := filepath.Join(t.TempDir(), "argv of runs.jsonl")
			dir := t.TempDir()
			// slow: each post-processor stays running, so they overlap.
			cmd := fmt.Sprintf(`%s --mode=slow --record=%q`, quoted, record)
			serveProcess(t, dir, append(c.env, "CASCADE_POSTPROCESS_CMD="+cmd)...)
			prefix := filepath.Join(dir, "s3", "cascade", "traces")
			for i := range c.traces {
				writeRaw(t, prefix, fmt.Sprintf("trace %d", i))
			}
			var runs [][]string
			testkit.Eventually(t, 20*time.Second, fmt.Sprintf("%d post-processors started", c.traces), func() bool {
				b, _ := os.ReadFile(record)
				runs = nil
				for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
					var args []string
					if json.Unmarshal(line, &args) == nil {
						runs = append(runs, args)
					}
				}
				return len(runs) >= c.traces
			})
			var got []string
			for _, args := range runs {
				j := slices.Index(args, "-j")
				if j < 0 || j+1 >= len(args) || !strings.HasPrefix(args[j-1], prefix+"/trace ") {
					t.Fatalf("command line %q", args)
				}
				got = append(got, args[j+1])
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("-j %v, want %v", got, c.want)
			}
		})
	}
}

// TestSimulatorPathWithASpace: a run succeeds with CASCADE_SIM_CMD naming a
// simulator whose path holds spaces.
func TestSimulatorPathWithASpace(t *testing.T) {
	t.Parallel()
	_, quoted := spacedCopy(t, fakesim.Build(t), "accel-sim.out")
	dir := t.TempDir()
	addr, _ := serveProcess(t, dir,
		"CASCADE_SIM_CMD="+quoted,
		"CASCADE_SIM_CONFIGS_DIR="+simconfigtest.Write(t, t.TempDir()))
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	prefix := filepath.Join(dir, "s3", "cascade", "traces")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: prefix, RunName: "qs"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "trace ready", func() bool {
		var r struct{ Trace *struct{ State string } }
		gql(t, addr, `{ trace(id: "qs") { state } }`, &r)
		return r.Trace != nil && r.Trace.State == "READY"
	})
	var l struct{ LaunchRun struct{ ID string } }
	gql(t, addr, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM90_H100"}) { id } }`, &l)
	var r struct {
		Run struct {
			State string
			Error *string
		}
	}
	testkit.Eventually(t, 20*time.Second, "run over", func() bool {
		gql(t, addr, `{ run(id: "`+l.LaunchRun.ID+`") { state error } }`, &r)
		return r.Run.State == "SUCCEEDED" || r.Run.State == "FAILED"
	})
	if r.Run.State != "SUCCEEDED" {
		t.Fatalf("%s: %v", r.Run.State, *r.Run.Error)
	}
}
