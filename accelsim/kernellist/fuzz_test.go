package kernellist

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse: a processed kernel list never panics the parser; an error
// names its line; and a list that parses, written out whole by WriteSubset
// (every kernel chosen), parses to the same commands, each kernel beside
// its trace.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"MemcpyHtoD,0x00007f1b2c000000,4096\nkernel-1.trace\nMemcpyHtoD,0x00007f1b2c100000,8\nkernel-2.tracez\n",
		"kernel-1-ctx_0x6165bdd7ec90.traceg\r\nkernel-1-ctx_0x6165BDD7EC91.traceg.xz\r\n# comment\n\nkernel-3.trace.xz",
		"MemcpyHtoD,0x1\n", "MemcpyHtoD,zz,1\n", "MemcpyHtoD, 0x10 , 12 \n", "kernels/kernel-4.tracez\n",
		"kernel-5.trace\nkernel-5.trace\n", "kernel-x.trace\nkernel-1.trace\n", "MemcpyDtoH,0x1,2\n",
	} {
		f.Add(s)
	}
	lineErr := regexp.MustCompile(`^line \d+: `)
	f.Fuzz(func(t *testing.T, text string) {
		cmds, err := Parse(strings.NewReader(text))
		if err != nil {
			if !lineErr.MatchString(err.Error()) {
				t.Fatalf("error %q names no line", err)
			}
			return
		}
		lines := strings.Split(text, "\n")
		var chosen []Ref
		for _, c := range cmds {
			if c.Line < 1 || c.Line > len(lines) || strings.TrimRight(lines[c.Line-1], "\r") != c.Text {
				t.Fatalf("command %+v is not line %d of %q", c, c.Line, text)
			}
			if c.KernelOK {
				chosen = append(chosen, c.Kernel)
			}
		}
		if len(chosen) == 0 {
			return
		}
		src := t.TempDir()
		l := &List{Path: filepath.Join(src, Name), Commands: cmds}
		for _, c := range l.Kernels() {
			p := l.TracePath(c)
			if !filepath.IsLocal(filepath.FromSlash(c.TraceFile)) {
				continue // WriteSubset refuses it; checked below
			}
			if os.MkdirAll(filepath.Dir(p), 0o755) != nil || os.WriteFile(p, []byte(c.TraceFile), 0o644) != nil {
				return // two lines name a file and a directory of one name: no such trace directory can exist
			}
		}
		out, err := WriteSubset(l, filepath.Join(t.TempDir(), "run"), chosen)
		if err != nil {
			if strings.Contains(err.Error(), "leaves the list's directory") && regexp.MustCompile(`:\d+: trace path`).MatchString(err.Error()) {
				return
			}
			t.Fatalf("WriteSubset of %q: %v", text, err)
		}
		again, err := Read(out.Path)
		if err != nil {
			t.Fatalf("%q written as %q does not parse: %v", text, readFile(t, out.Path), err)
		}
		if !reflect.DeepEqual(again.Commands, out.Commands) {
			t.Fatalf("%q written as %q parses to\n%+v\nwant\n%+v", text, readFile(t, out.Path), again.Commands, out.Commands)
		}
		var want []Command
		pending := []Command{}
		for _, c := range cmds {
			switch {
			case c.IsMemcpy():
				pending = append(pending, c)
			case c.KernelOK:
				want = append(append(want, pending...), c)
				pending = pending[:0]
			}
		}
		if len(want) != len(again.Commands) {
			t.Fatalf("%q written as %q: %d commands, want %d", text, readFile(t, out.Path), len(again.Commands), len(want))
		}
		for i, c := range again.Commands {
			w := want[i]
			if c.Text != w.Text || c.TraceFile != w.TraceFile || c.Kernel != w.Kernel || c.KernelOK != w.KernelOK {
				t.Fatalf("command %d: %+v, want %+v", i, c, w)
			}
			if !c.IsMemcpy() {
				if b, err := os.ReadFile(again.TracePath(c)); err != nil || string(b) != c.TraceFile {
					t.Fatalf("trace of %+v beside the written list: %q, %v", c, b, err)
				}
			}
		}
	})
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzParseTraceFileName: a kernel trace file name gives its id and
// context, and the name written back from them gives the same.
func FuzzParseTraceFileName(f *testing.F) {
	for _, s := range []string{
		"kernel-1.trace", "traces/kernel-3-ctx_0x6165BDD7EC90.tracez", "kernel-007.traceg.xz", "kernel-1-ctx_0x.trace",
		"kernel-99999999999999999999.trace", "kernel--1.trace", "kernel-1.trace.xz.xz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ref, ok := ParseTraceFileName(name)
		if !ok {
			return
		}
		if ref.ID < 0 {
			t.Fatalf("%q: negative id %d", name, ref.ID)
		}
		again := "kernel-" + strconv.Itoa(ref.ID)
		if ref.Context != "" {
			again += "-ctx_" + ref.Context
		}
		again += ".tracez"
		if r2, ok := ParseTraceFileName(again); !ok || r2 != ref {
			t.Fatalf("%q gives %+v; %q gives %+v, %v", name, ref, again, r2, ok)
		}
		if NormalizeContext(ref.Context) != ref.Context {
			t.Fatalf("%q: context %q is not normalized", name, ref.Context)
		}
	})
}

// TestParseLongLine: a line past the parser's 1 MiB limit (too long for
// a fuzz seed) fails naming its line, as FuzzParse wants of every error.
func TestParseLongLine(t *testing.T) {
	_, err := Parse(strings.NewReader("kernel-1.trace\n" + strings.Repeat("x", 2<<20) + "\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Fatalf("err = %v, want one naming line 2", err)
	}
}
