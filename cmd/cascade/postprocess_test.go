package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/cascade-sim/cascade/postproc"
)

// classicTrace is a raw kernel trace of accelsim/posttraces' golden tests.
func classicTrace(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "accelsim", "posttraces", "testdata", "golden", "classic", "in", "kernel-1.trace"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rawTraceDir writes a traces directory of one kernel and its list.
func rawTraceDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"kernel-1.trace": classicTrace(t), "kernelslist": "kernel-1.trace\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPostprocessCommand(t *testing.T) {
	cases := []struct {
		name   string
		args   func(dir string) []string
		code   int
		stderr string
		want   string // the kernel trace written
	}{
		{name: "OK", args: func(d string) []string { return []string{d, "-j", "2"} }, code: 0, want: "kernel-1.tracez"},
		{name: "OK text jN", args: func(d string) []string { return []string{"--text", "-j2", d} }, code: 0, want: "kernel-1.traceg"},
		{name: "OK list file", args: func(d string) []string { return []string{filepath.Join(d, "kernelslist"), "-j=1"} }, code: 0, want: "kernel-1.tracez"},
		{name: "ErrNoTarget", args: func(string) []string { return []string{"-j", "2"} }, code: 2, stderr: "missing"},
		{name: "ErrBadJobs", args: func(d string) []string { return []string{d, "-j", "zero"} }, code: 2, stderr: "-j"},
		{name: "ErrUnknownFlag", args: func(d string) []string { return []string{d, "--fast"} }, code: 2, stderr: "unknown flag"},
		{name: "ErrMissingDir", args: func(d string) []string { return []string{filepath.Join(d, "nope")} }, code: 1, stderr: "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, work := rawTraceDir(t), filepath.Join(t.TempDir(), "work")
			t.Setenv("CASCADE_WORK_DIR", work) // created on demand
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append([]string{"postprocess"}, tc.args(dir)...), &stdout, &stderr); code != tc.code {
				t.Fatalf("code = %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.stderr)
			}
			if tc.code != 0 {
				return
			}
			for _, name := range []string{"kernelslist.g", tc.want} {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Error(err)
				}
			}
			ents, err := os.ReadDir(work)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				t.Errorf("left behind in %s: %s", work, e.Name())
			}
		})
	}
}

// TestPostprocessTraceFolder: given a trace's folder (traces/ and
// metadata.json) in place of its traces/, the one line of error says to
// give traces/, and nothing is written.
func TestPostprocessTraceFolder(t *testing.T) {
	pp := t.TempDir()
	traces := filepath.Join(pp, "traces")
	if err := os.Rename(rawTraceDir(t), traces); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pp, "metadata.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CASCADE_WORK_DIR", filepath.Join(t.TempDir(), "work"))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"postprocess", pp}, &stdout, &stderr); code != 1 {
		t.Fatalf("code = %d, want 1; stderr:\n%s", code, stderr.String())
	}
	want := postproc.ErrorPrefix + pp + ": no kernelslist or kernelslist_ctx_* file; it has a traces folder that does: give " + traces + "\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Join(traces, "kernelslist.g")); err == nil {
		t.Error("kernelslist.g written")
	}
}

// TestPostprocessWarnsLast: a kernel trace with fewer instruction lines
// than its stats row says is processed, and the command's last line warns
// of it, as cascade serve reads it (postproc.WarningPrefix).
func TestPostprocessWarnsLast(t *testing.T) {
	dir := rawTraceDir(t)
	t.Setenv("CASCADE_WORK_DIR", filepath.Join(t.TempDir(), "work"))
	stats := "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n" +
		"kernel-1.trace, _Z4testPf, 2, 2, 1, 4, 70, 1, 1, 70, 20,20\n"
	if err := os.WriteFile(filepath.Join(dir, "stats.csv"), []byte(stats), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"postprocess", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("code = %d, want 0; stderr:\n%s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	want := postproc.WarningPrefix + "kernel-1.trace: 14 instruction lines, stats.csv's total_reported_insts says 20: the file may be cut short; upload it again"
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
}

// TestPostprocessHelp: -h prints the usage, the flags and the variables
// on stdout and exits 0.
func TestPostprocessHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"postprocess", "-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"usage: cascade postprocess <traces dir | kernelslist file> [-j N] [--text]", "-j N", "--text", "CASCADE_WORK_DIR", "TRACEZ_SUBCHUNK_INSTS",
		".tracez, the default, is read only by Accel-Sim 2.0", "reads .traceg\nand .traceg.xz only", "give --text"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-h does not mention %q:\n%s", want, stdout.String())
		}
	}
}

// TestBuiltinCommandParses: the command line that postproc starts the
// built-in post-processor with gives postprocess the format asked for.
func TestBuiltinCommandParses(t *testing.T) {
	for _, format := range []string{postproc.FormatTracez, postproc.FormatTraceg} {
		args := postproc.BuiltinCommand([]string{"cascade", "postprocess"}, format)
		args = append(args[2:], "/traces", "-j", "3")
		opts, target, err := parsePostprocess(args)
		if err != nil || target != "/traces" || opts.Format != format || opts.Jobs != 3 {
			t.Errorf("%s: %q parses to %+v, %q, %v", format, args, opts, target, err)
		}
	}
}

func TestPostprocessSubchunkEnv(t *testing.T) {
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
			dir := rawTraceDir(t)
			t.Setenv("CASCADE_WORK_DIR", t.TempDir())
			t.Setenv("TRACEZ_SUBCHUNK_INSTS", tc.env)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"postprocess", dir}, &stdout, &stderr)
			if tc.err {
				if code != 1 || !strings.Contains(stderr.String(), "TRACEZ_SUBCHUNK_INSTS") {
					t.Fatalf("exit %d, stderr %q; want 1 and a TRACEZ_SUBCHUNK_INSTS error", code, stderr.String())
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
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
