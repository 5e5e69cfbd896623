package kernellist_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/kernellist/kernellisttest"
)

func TestParseTraceFileName(t *testing.T) {
	tests := []struct {
		name string
		want kernellist.Ref
		ok   bool
	}{
		{"kernel-3-ctx_0x6165bdd7ec90.tracez", kernellist.Ref{ID: 3, Context: "0x6165bdd7ec90"}, true},
		{"traces/kernel-12-ctx_0x6165BDD7EC90.traceg.xz", kernellist.Ref{ID: 12, Context: "0x6165bdd7ec90"}, true},
		{"kernel-3.traceg", kernellist.Ref{ID: 3, Context: ""}, true},
		{"kernel-1.trace.xz", kernellist.Ref{ID: 1, Context: ""}, true},
		{"kernel-1.trace", kernellist.Ref{ID: 1, Context: ""}, true},
		{"kernelslist.g", kernellist.Ref{}, false},
		{"kernel-x.traceg", kernellist.Ref{}, false},
		{"kernel-3.tracez.tmp", kernellist.Ref{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := kernellist.ParseTraceFileName(tt.name)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestReadKernelList(t *testing.T) {
	dir := t.TempDir()
	path := kernellisttest.WriteTraces(t, dir,
		"MemcpyHtoD,0x00007f0e8e000000,800000",
		"kernel-1.traceg",
		"# a comment line, ignored",
		"",
		"MemcpyDtoH,0x00007f0e8e000000,800000",
		"kernel-2.traceg\r",
	)
	l, err := kernellist.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Commands) != 3 || !l.Commands[0].IsMemcpy() || l.Commands[2].Line != 6 {
		t.Fatalf("commands = %+v", l.Commands)
	}
	ks := l.Kernels()
	if len(ks) != 2 || ks[1].TraceFile != "kernel-2.traceg" || ks[1].Kernel != (kernellist.Ref{ID: 2}) {
		t.Fatalf("kernels = %+v", ks)
	}
	if got := l.TracePath(ks[0]); got != filepath.Join(dir, "kernel-1.traceg") {
		t.Errorf("TracePath = %q", got)
	}

	bad := filepath.Join(dir, "bad.g")
	os.WriteFile(bad, []byte("kernel-1.traceg\nMemcpyHtoD,0x10\n"), 0o644)
	if _, err := kernellist.Read(bad); err == nil || !strings.Contains(err.Error(), "bad.g: line 2") {
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
		chosen []kernellist.Ref
		want   []string
	}{
		{"first kernel keeps only the copies before it", []kernellist.Ref{{1, "0xaaa"}}, []string{m1, a}},
		{"a later kernel keeps every earlier copy", []kernellist.Ref{{3, "0xaaa"}}, []string{m1, m2, m3, d}},
		{"two kernels keep the copies between them in place", []kernellist.Ref{{2, "0xaaa"}, {1, "0xaaa"}}, []string{m1, a, m2, b}},
		{"context picks one of two kernels with the same id", []kernellist.Ref{{1, "0xbbb"}}, []string{m1, m2, c}},
		{"no context picks the id in every context", []kernellist.Ref{{1, ""}}, []string{m1, a, m2, c}},
		{"context spelled differently", []kernellist.Ref{{2, "0xAAA"}}, []string{m1, m2, b}},
		{"all", []kernellist.Ref{{1, ""}, {2, ""}, {3, ""}}, []string{m1, a, m2, b, c, m3, d}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := kernellist.Read(kernellisttest.WriteTraces(t, filepath.Join(t.TempDir(), "traces"), original...))
			if err != nil {
				t.Fatal(err)
			}
			runDir := filepath.Join(t.TempDir(), "run")
			out, err := kernellist.WriteSubset(src, runDir, tt.chosen)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(runDir, kernellist.Name))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); !slices.Equal(got, tt.want) {
				t.Errorf("kernelslist.g =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			// Reading the written list back gives the same commands, and each
			// kernel line resolves, beside the list, to the original content.
			back, err := kernellist.Read(out.Path)
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
	src, err := kernellist.Read(kernellisttest.WriteTraces(t, t.TempDir(), "kernel-1.traceg", "kernel-2.traceg"))
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	for range 2 {
		if _, err := kernellist.WriteSubset(src, runDir, []kernellist.Ref{{ID: 2}}); err != nil {
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
	src, err := kernellist.Read(kernellisttest.WriteTraces(t, dir, "kernel-1-ctx_0xaaa.traceg", "kernel-2-ctx_0xaaa.traceg"))
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(t.TempDir(), "run")
	_, err = kernellist.WriteSubset(src, runDir, []kernellist.Ref{{ID: 7}, {ID: 1}, {ID: 2, Context: "0xbbb"}, {ID: 7}})
	var unknown *kernellist.UnknownKernelsError
	if !errors.As(err, &unknown) || err.Error() != "unknown kernel ids: 2@0xbbb, 7" {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(runDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run dir written despite the error: %v", err)
	}
	if _, err := kernellist.WriteSubset(src, runDir, nil); err == nil {
		t.Error("no kernels chosen: no error")
	}

	os.Remove(filepath.Join(dir, "kernel-2-ctx_0xaaa.traceg"))
	if _, err := kernellist.WriteSubset(src, runDir, []kernellist.Ref{{ID: 2}}); err == nil || !strings.Contains(err.Error(), "kernel-2-ctx_0xaaa.traceg") {
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
		if got := kernellist.NormalizeContext(in); got != want {
			t.Errorf("NormalizeContext(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKernelLinesTheShellActsOn: a kernel line naming a trace with a byte
// the shell acts on (Accel-Sim opens traces with popen("cat ...")) is an
// error naming the line and the byte; the names tracers and
// post-processors write are not.
func TestKernelLinesTheShellActsOn(t *testing.T) {
	for _, ok := range []string{"kernel-1.traceg", "kernel-12-ctx_0x55d2c3a1e4f0.traceg.xz", "kernels/kernel-1.trace", "kernel-1+b=c,d:e@f%g.tracez"} {
		if _, err := kernellist.Parse(strings.NewReader("MemcpyHtoD,0x1,8\n" + ok + "\r\n")); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, b := range map[string]string{"kernel-1.traceg;rm -rf x": ";", "kernel 1.traceg": " ", "kernel-$(id).traceg": "$", "kernel-1`x`.traceg": "`", "kernel-'1'.traceg": "'", "kernel-1.traceg|x": "|", "kernel-1\\.traceg": "\\"} {
		_, err := kernellist.Parse(strings.NewReader("MemcpyHtoD,0x1,8\n" + bad + "\n"))
		if want := "line 2: kernel trace " + strconv.Quote(bad) + " holds " + strconv.Quote(b); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %s", bad, err, want)
		}
	}
}
