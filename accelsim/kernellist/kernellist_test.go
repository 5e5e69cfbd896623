package runs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTraces writes a processed trace directory: a kernelslist.g with the
// given lines, and for every kernel line a .traceg file whose header names
// the kernel, padded so that each file has a different size. It returns the
// list's path.
func writeTraces(t testing.TB, dir string, lines ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "kernel") {
			continue
		}
		ref, _ := ParseTraceFileName(l)
		header := fmt.Sprintf("-kernel name = _Z7kernel%dPf\n-kernel id = %d\n-grid dim = (98,1,1)\n-block dim = (1024,1,1)\n"+
			"-binary version = 90\n-cuda stream id = 0\n-accelsim tracer version = 5\n\n#traces format = [line_num] PC mask ...\n",
			ref.ID, ref.ID)
		body := header + strings.Repeat("0010 ffffffff 1 R2 IMAD.MOV.U32 1 R255 0 0\n", i+1)
		path := filepath.Join(dir, filepath.FromSlash(l))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, KernelListName)
	if err := os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return list
}

func TestParseTraceFileName(t *testing.T) {
	tests := []struct {
		name string
		want KernelRef
		ok   bool
	}{
		{"kernel-3-ctx_0x6165bdd7ec90.tracez", KernelRef{3, "0x6165bdd7ec90"}, true},
		{"traces/kernel-12-ctx_0x6165BDD7EC90.traceg.xz", KernelRef{12, "0x6165bdd7ec90"}, true},
		{"kernel-3.traceg", KernelRef{3, ""}, true},
		{"kernel-1.trace.xz", KernelRef{1, ""}, true},
		{"kernel-1.trace", KernelRef{1, ""}, true},
		{"kernelslist.g", KernelRef{}, false},
		{"kernel-x.traceg", KernelRef{}, false},
		{"kernel-3.tracez.tmp", KernelRef{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseTraceFileName(tt.name)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestReadKernelList(t *testing.T) {
	dir := t.TempDir()
	path := writeTraces(t, dir,
		"MemcpyHtoD,0x00007f0e8e000000,800000",
		"kernel-1.traceg",
		"# a comment line, ignored",
		"",
		"MemcpyDtoH,0x00007f0e8e000000,800000",
		"kernel-2.traceg\r",
	)
	l, err := ReadKernelList(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Commands) != 3 || !l.Commands[0].IsMemcpy() || l.Commands[2].Line != 6 {
		t.Fatalf("commands = %+v", l.Commands)
	}
	ks := l.Kernels()
	if len(ks) != 2 || ks[1].TraceFile != "kernel-2.traceg" || ks[1].Kernel != (KernelRef{ID: 2}) {
		t.Fatalf("kernels = %+v", ks)
	}
	if got := l.TracePath(ks[0]); got != filepath.Join(dir, "kernel-1.traceg") {
		t.Errorf("TracePath = %q", got)
	}

	bad := filepath.Join(dir, "bad.g")
	os.WriteFile(bad, []byte("kernel-1.traceg\nMemcpyHtoD,0x10\n"), 0o644)
	if _, err := ReadKernelList(bad); err == nil || !strings.Contains(err.Error(), "bad.g: line 2") {
		t.Errorf("malformed memcpy: err = %v", err)
	}
}

func TestWriteKernelSubset(t *testing.T) {
	const (
		a, b, c, d = "kernel-1-ctx_0xaaa.traceg", "kernel-2-ctx_0xaaa.traceg", "kernel-1-ctx_0xbbb.traceg", "kernel-3-ctx_0xaaa.traceg"
		m1, m2, m3 = "MemcpyHtoD,0x00007f0000000000,100", "MemcpyHtoD,0x00007f0000001000,200", "MemcpyHtoD,0x00007f0000002000,300"
		m4         = "MemcpyHtoD,0x00007f0000003000,400"
	)
	original := []string{m1, a, m2, b, c, m3, d, m4}
	tests := []struct {
		name   string
		chosen []KernelRef
		want   []string
	}{
		{"first kernel keeps only the copies before it", []KernelRef{{1, "0xaaa"}}, []string{m1, a}},
		{"a later kernel keeps every earlier copy", []KernelRef{{3, "0xaaa"}}, []string{m1, m2, m3, d}},
		{"two kernels keep the copies between them in place", []KernelRef{{2, "0xaaa"}, {1, "0xaaa"}}, []string{m1, a, m2, b}},
		{"context picks one of two kernels with the same id", []KernelRef{{1, "0xbbb"}}, []string{m1, m2, c}},
		{"no context picks the id in every context", []KernelRef{{1, ""}}, []string{m1, a, m2, c}},
		{"context spelled differently", []KernelRef{{2, "0xAAA"}}, []string{m1, m2, b}},
		{"all", []KernelRef{{1, ""}, {2, ""}, {3, ""}}, []string{m1, a, m2, b, c, m3, d}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := ReadKernelList(writeTraces(t, filepath.Join(t.TempDir(), "traces"), original...))
			if err != nil {
				t.Fatal(err)
			}
			runDir := filepath.Join(t.TempDir(), "run")
			out, err := WriteKernelSubset(src, runDir, tt.chosen)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(runDir, KernelListName))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); !slices.Equal(got, tt.want) {
				t.Errorf("kernelslist.g =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			// Reading the written list back gives the same commands, and each
			// kernel line resolves, beside the list, to the original content.
			back, err := ReadKernelList(out.Path)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Commands) != len(out.Commands) {
				t.Errorf("read back %d commands, returned %d", len(back.Commands), len(out.Commands))
			}
			for _, k := range back.Kernels() {
				got, err := os.ReadFile(back.TracePath(k))
				if err != nil {
					t.Fatalf("link %s: %v", k.TraceFile, err)
				}
				want, _ := os.ReadFile(src.TracePath(k))
				if string(got) != string(want) {
					t.Errorf("%s: linked content differs", k.TraceFile)
				}
			}
		})
	}
}

func TestWriteKernelSubsetAgainReplacesLinks(t *testing.T) {
	src, err := ReadKernelList(writeTraces(t, t.TempDir(), "kernel-1.traceg", "kernel-2.traceg"))
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	for range 2 {
		if _, err := WriteKernelSubset(src, runDir, []KernelRef{{ID: 2}}); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(runDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"kernel-2.traceg", "kernelslist.g"}) {
		t.Errorf("run dir holds %q", names)
	}
}

func TestWriteKernelSubsetErrors(t *testing.T) {
	dir := t.TempDir()
	src, err := ReadKernelList(writeTraces(t, dir, "kernel-1-ctx_0xaaa.traceg", "kernel-2-ctx_0xaaa.traceg"))
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(t.TempDir(), "run")
	_, err = WriteKernelSubset(src, runDir, []KernelRef{{ID: 7}, {ID: 1}, {ID: 2, Context: "0xbbb"}, {ID: 7}})
	var unknown *UnknownKernelsError
	if !errors.As(err, &unknown) || err.Error() != "unknown kernel ids: 2@0xbbb, 7" {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(runDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run dir written despite the error: %v", err)
	}
	if _, err := WriteKernelSubset(src, runDir, nil); err == nil {
		t.Error("no kernels chosen: no error")
	}

	os.Remove(filepath.Join(dir, "kernel-2-ctx_0xaaa.traceg"))
	if _, err := WriteKernelSubset(src, runDir, []KernelRef{{ID: 2}}); err == nil || !strings.Contains(err.Error(), "kernel-2-ctx_0xaaa.traceg") {
		t.Errorf("missing trace file: err = %v", err)
	}
}

func TestNormalizeContext(t *testing.T) {
	for in, want := range map[string]string{
		"0x6165BDD7EC90": "0x6165bdd7ec90",
		"6165bdd7ec90":   "0x6165bdd7ec90",
		" 0x1 ":          "0x1",
		"":               "",
		"ctx-a":          "ctx-a",
	} {
		if got := NormalizeContext(in); got != want {
			t.Errorf("NormalizeContext(%q) = %q, want %q", in, got, want)
		}
	}
}
