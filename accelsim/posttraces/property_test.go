package posttraces

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// TestProperty generates traces of several shapes, post-processes them and
// checks every block and warp against the naive reference.
func TestProperty(t *testing.T) {
	cases := []struct {
		name string
		gen  tracegen.Config
		opts Options
	}{
		{name: "classic v5", gen: tracegen.Config{Kernels: 2, Grid: [3]int{5, 3, 2}, Block: [3]int{100, 1, 1}, Insts: 40,
			Mem: true, LDGSTS: true, Idle: 0.3, Empty: 0.2, Seed: 1}},
		{name: "cluster v3 xz contexts", gen: tracegen.Config{Kernels: 2, Contexts: 2, Grid: [3]int{8, 2, 1}, Block: [3]int{64, 2, 1},
			Insts: 30, Layout: 11, Version: 3, XZ: true, Mem: true, LDGSTS: true, Idle: 0.2, Empty: 0.1, Seed: 2}},
		{name: "pure-go xz", gen: tracegen.Config{Grid: [3]int{4, 1, 1}, Block: [3]int{33, 1, 1}, Insts: 20, XZ: true, XZBin: "-",
			LDGSTS: true, Seed: 3}, opts: Options{XZ: "-"}},
		{name: "split and stream", gen: tracegen.Config{Grid: [3]int{3, 2, 1}, Block: [3]int{96, 1, 1}, Insts: 300,
			Mem: true, LDGSTS: true, Idle: 0.25, Empty: 0.2, Resident: 6, Seed: 4}, opts: Options{MaxPartMem: 2048, SubchunkInsts: 7}},
		{name: "many blocks", gen: tracegen.Config{Grid: [3]int{40, 20, 3}, Block: [3]int{32, 1, 1}, Insts: 3,
			LDGSTS: true, Empty: 0.3, Resident: 16, Seed: 5}, opts: Options{MaxPartMem: 4096}},
		{name: "all empty", gen: tracegen.Config{Grid: [3]int{3, 1, 1}, Empty: 1, Seed: 6}},
	}
	for _, tc := range cases {
		for _, text := range []bool{false, true} {
			name := tc.name + "/tracez"
			if text {
				name = tc.name + "/text"
			}
			t.Run(name, func(t *testing.T) {
				if tc.gen.XZ && (tc.gen.XZBin != "-" || tc.opts.XZ != "-") {
					testkit.SkipShort(t, "runs xz") // "pure-go xz" runs the pure-Go codec
				}
				t.Parallel()
				dir := t.TempDir()
				res, err := tracegen.Generate(context.Background(), dir, tc.gen)
				if err != nil {
					t.Fatal(err)
				}
				opts := tc.opts
				opts.Text, opts.Jobs, opts.WorkDir = text, 2, t.TempDir()
				if err := Run(context.Background(), dir, opts); err != nil {
					t.Fatal(err)
				}
				layout := max(tc.gen.Layout, 4)
				for _, k := range res.Kernels {
					header, want := reference(t, readRaw(t, k.Path), layout)
					out, _ := outputName(filepath.Base(k.Path), text)
					out = filepath.Join(dir, out)
					if text {
						if got, w := readRaw(t, out), renderText(header, want, layout == 11); got != w {
							t.Fatalf("%s differs from the reference:\n got %.2000q\nwant %.2000q", out, got, w)
						}
						continue
					}
					gotHeader, got := readTracez(t, out)
					if gotHeader != header {
						t.Errorf("%s header = %q, want %q", out, gotHeader, header)
					}
					if len(got) != len(want) {
						t.Fatalf("%s: %d blocks, want %d", out, len(got), len(want))
					}
					for i := range want {
						if !reflect.DeepEqual(got[i].hdr, want[i].hdr) {
							t.Fatalf("%s block %d header = %+v, want %+v", out, i, got[i].hdr, want[i].hdr)
						}
						if len(got[i].warps) != len(want[i].warps) {
							t.Fatalf("%s block %d: %d warps, want %d", out, i, len(got[i].warps), len(want[i].warps))
						}
						for w := range want[i].warps {
							if !reflect.DeepEqual(norm(got[i].warps[w]), norm(want[i].warps[w])) {
								t.Fatalf("%s block %d warp %d:\n got %q\nwant %q", out, i, w, got[i].warps[w], want[i].warps[w])
							}
						}
					}
				}
				list := readRaw(t, filepath.Join(dir, "kernelslist.g"))
				if n := strings.Count(list, "\nkernel") + boolInt(strings.HasPrefix(list, "kernel")); n != len(res.Kernels) {
					t.Errorf("kernelslist.g names %d kernels, want %d:\n%s", n, len(res.Kernels), list)
				}
				assertEmptyDir(t, opts.WorkDir)
			})
		}
	}
}

func norm(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
}

// TestZstdCLI proves a .tracez frame decodes with the reference zstd tool.
func TestZstdCLI(t *testing.T) {
	testkit.SkipShort(t, "runs zstd")
	zstdBin, err := exec.LookPath("zstd")
	if err != nil {
		t.Fatal("zstd is not installed; scripts/deps.sh installs it")
	}
	dir := t.TempDir()
	if _, err := tracegen.Generate(context.Background(), dir, tracegen.Config{Grid: [3]int{2, 1, 1}, Insts: 50, Mem: true, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), dir, Options{SubchunkInsts: 16, WorkDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kernel-1.tracez")
	r, err := tracez.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := r.Blocks[0].Warps[0]
	var want []string
	r.Insts(w, func(l []byte) error { want = append(want, string(l)); return nil })

	data, _ := os.ReadFile(path)
	off := int(w.Offset) + 8
	var lines []string
	for range w.Subchunks {
		n := int(binary.LittleEndian.Uint32(data[off:]))
		cmd := exec.Command(zstdBin, "-dc")
		cmd.Stdin = bytes.NewReader(data[off+4 : off+4+n])
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("zstd -dc: %v", err)
		}
		lines = append(lines, strings.Split(string(out), "\n")...)
		off += 4 + n
	}
	if !reflect.DeepEqual(lines, want) || len(want) != 50 {
		t.Fatalf("zstd -dc frames = %q, want %q", lines, want)
	}
}
