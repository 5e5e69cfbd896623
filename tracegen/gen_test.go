package tracegen

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

const statsHeader = "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts"

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".xz") {
		zr, err := xz.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return string(data)
}

func TestGenerate(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		files     []string
		ids       int
		lineinfo  bool
		immediate bool
	}{
		{name: "single context v5", cfg: Config{Kernels: 2, Mem: true, LDGSTS: true},
			files: []string{"kernel-1.trace", "kernel-2.trace", "kernelslist", "stats.csv"}, ids: 4, lineinfo: true},
		{name: "per context v3 xz layout 11", cfg: Config{Contexts: 2, Layout: 11, Version: 3, XZ: true, XZBin: "-", Mem: true},
			ids: 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := Generate(context.Background(), dir, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			for _, s := range res.Stats {
				lines := strings.Split(strings.TrimSpace(read(t, s)), "\n")
				if lines[0] != statsHeader {
					t.Errorf("%s header = %q", s, lines[0])
				}
				if !strings.HasPrefix(lines[1], "kernel-1") || strings.Count(lines[1], ", ") != 10 {
					t.Errorf("%s row = %q", s, lines[1])
				}
			}
			for _, l := range res.Lists {
				text := read(t, l)
				if !strings.Contains(text, "MemcpyHtoD,0x") {
					t.Errorf("%s has no MemcpyHtoD: %q", l, text)
				}
				if tc.cfg.Contexts > 0 && !strings.HasPrefix(filepath.Base(l), "kernelslist_ctx_0x") {
					t.Errorf("list name %s", l)
				}
			}
			if len(res.Kernels) != max(tc.cfg.Kernels, 1)*max(tc.cfg.Contexts, 1) {
				t.Fatalf("%d kernels", len(res.Kernels))
			}
			for _, k := range res.Kernels {
				text := read(t, k.Path)
				if got := strings.Contains(text, "-enable lineinfo"); got != tc.lineinfo {
					t.Errorf("%s: lineinfo header %v, want %v", k.Path, got, tc.lineinfo)
				}
				var n uint64
				for line := range strings.SplitSeq(text, "\n") {
					if line == "" || line[0] == '-' || line[0] == '#' {
						continue
					}
					n++
					f := strings.Fields(line)
					if len(f[tc.ids+1]) != 8 {
						t.Fatalf("%s: mask not at field %d: %q", k.Path, tc.ids+1, line)
					}
				}
				if n != k.Lines || int64(len(text)) != k.Bytes {
					t.Errorf("%s: %d lines %d bytes, result says %d and %d", k.Path, n, len(text), k.Lines, k.Bytes)
				}
			}
		})
	}
}

func TestSizeAndDeterminism(t *testing.T) {
	var a, b bytes.Buffer
	cfg := Config{Grid: [3]int{16, 1, 1}, Block: [3]int{256, 1, 1}, Bytes: 2 << 20, Mem: true, LDGSTS: true, Idle: 0.2, Seed: 42}
	ka, err := WriteKernel(&a, 1, cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	WriteKernel(&b, 1, cfg, 7)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("same seed, different output")
	}
	if ka.Bytes < 1<<20 || ka.Bytes > 3<<20 {
		t.Errorf("asked for 2 MiB, got %d bytes", ka.Bytes)
	}
}
