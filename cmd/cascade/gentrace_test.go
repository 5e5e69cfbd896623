package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

func TestGentraceCommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{name: "OK", args: []string{"-kernels", "2", "-grid", "2,2", "-block", "64", "-size", "64K", "-layout", "11", "-ldgsts", "-xz"}, code: 0},
		{name: "OK without xz", args: []string{"-kernels", "2", "-grid", "2,2", "-block", "64", "-size", "64K", "-layout", "11", "-ldgsts"}, code: 0},
		{name: "ErrNoDir", args: []string{"-kernels", "2"}, code: 2},
		{name: "ErrGrid", args: []string{"-grid", "a,b"}, code: 2},
		{name: "ErrLayout", args: []string{"-layout", "5"}, code: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if slices.Contains(tc.args, "-xz") {
				testkit.SkipShort(t, "runs xz")
			}
			dir := t.TempDir()
			var out, errb bytes.Buffer
			args := tc.args
			if tc.name != "ErrNoDir" {
				args = append(args, dir)
			}
			if code := run(context.Background(), append([]string{"gentrace"}, args...), &out, &errb); code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, errb.String())
			}
			if tc.code == 0 {
				if _, err := os.Stat(filepath.Join(dir, "kernelslist")); err != nil {
					t.Errorf("no kernel list written: %v", err)
				}
			}
		})
	}
}

// TestGentraceTraceList: -trace-list writes the trace of a traceList's
// ranges of the full trace -from; without -from it is a usage error, and
// a bad list an error naming its line.
func TestGentraceTraceList(t *testing.T) {
	full := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"gentrace", "-kernels", "4", filepath.Join(full, "traces")}, &out, &errb); code != 0 {
		t.Fatalf("gentrace: %d %s", code, errb.String())
	}
	list := filepath.Join(t.TempDir(), "plan.txt")
	os.WriteFile(list, []byte("# plan\nDYNAMIC_KERNEL_LIMIT_START=2 DYNAMIC_KERNEL_LIMIT_END=3 TERMINATE_UPON_LIMIT=1\n"), 0o644)
	less := t.TempDir()
	if code := run(context.Background(), []string{"gentrace", "-trace-list", list, "-from", full, less}, &out, &errb); code != 0 {
		t.Fatalf("gentrace -trace-list: %d %s", code, errb.String())
	}
	got, _ := filepath.Glob(filepath.Join(less, "traces", "kernel*"))
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	if want := []string{"kernel-2.trace", "kernel-3.trace", "kernelslist-2-3"}; !slices.Equal(got, want) {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if code := run(context.Background(), []string{"gentrace", "-trace-list", list, less}, &out, &errb); code != 2 {
		t.Errorf("without -from: code %d", code)
	}
	os.WriteFile(list, []byte("DYNAMIC_KERNEL_LIMIT_START=x\n"), 0o644)
	errb.Reset()
	if code := run(context.Background(), []string{"gentrace", "-trace-list", list, "-from", full, t.TempDir()}, &out, &errb); code != 1 || !bytes.Contains(errb.Bytes(), []byte("line 1")) {
		t.Errorf("a bad list: code %d, %s", code, errb.String())
	}
}
