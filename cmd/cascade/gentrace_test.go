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
