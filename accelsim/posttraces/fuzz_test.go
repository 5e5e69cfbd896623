package posttraces

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/tracez"
)

// fuzzOpts are post-processing options cheap enough to run per input.
func fuzzOpts(t *testing.T, text bool) Options {
	return Options{Jobs: 1, Text: text, WorkDir: t.TempDir(), XZ: "-", SubchunkInsts: 3, MaxPartMem: 4096}
}

// FuzzInstructionLine: the layout of an instruction line is decided by its
// leading ids; a line that fits reads the ids its fields hold, and the line
// written back from those ids and its instruction reads the same.
func FuzzInstructionLine(f *testing.F) {
	for _, s := range []string{
		"0 0 0 0 0010 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0",
		"1 0 0 3 0 0 0 0 0 0 0 00f0 0000ffff 0 LDGSTS.E.BYPASS.128 2 R2 R4 1 0x7f0000000000 16",
		"0 0 0 0 0 0 0010 ffffffff 0 EXIT 0 0",
		"00 1  2 3 0a0 FFFFFFFF 2 R1 R2 LDGSTS 0 0",
		"4294967295 0 0 0 10 ffffffff 0 NOP", "4294967296 0 0 0 10 ffffffff 0 NOP",
		"0 0 0 0 0010 ffffffff 99999 R1 LDGSTS", "0 0 0 0 0010 ffffffff -1 LDGSTS",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := []byte(s)
		_ = isLDGSTS(line)
		n, err := detectLayout(line)
		if err != nil {
			return
		}
		var ids lineIDs
		if !parseIDs(line, n, &ids) {
			t.Fatalf("%q: layout %d detected but its ids do not parse", s, n)
		}
		fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
		for k := 0; k < n; k++ {
			v, err := strconv.ParseUint(fields[k], 10, 32)
			if err != nil || uint32(v) != ids.v[k] {
				t.Fatalf("%q: id %d read as %d, field %q", s, k, ids.v[k], fields[k])
			}
		}
		inst := line[ids.rest:]
		parts := make([]string, n)
		for k := range parts {
			parts[k] = strconv.FormatUint(uint64(ids.v[k]), 10)
		}
		again := []byte(strings.Join(parts, " ") + " " + string(inst))
		var ids2 lineIDs
		if n2, err := detectLayout(again); err != nil || n2 != n || !parseIDs(again, n, &ids2) || ids2.v != ids.v || !bytes.Equal(again[ids2.rest:], inst) {
			t.Fatalf("%q written back as %q reads differently (layout %d, %v)", s, again, n2, err)
		}
		// LDGSTS is the opcode after dest_num registers.
		f := strings.FieldsFunc(string(inst), func(r rune) bool { return r == ' ' })
		want := false
		if d, err := strconv.Atoi(f[2]); err == nil && d >= 0 && 3+d < len(f) {
			want = strings.Contains(f[3+d], "LDGSTS")
		}
		if got := isLDGSTS(inst); got != want {
			t.Fatalf("isLDGSTS(%q) = %v, want %v", inst, got, want)
		}
	})
}

// FuzzDim3: a header's "(x,y,z)" reads as three positive 32-bit numbers,
// and written back reads the same.
func FuzzDim3(f *testing.F) {
	for _, s := range []string{"-grid dim = (98,1,1)", "-block dim = ( 32 , 2, 1 )", "-grid dim = (0,1,1)", "-grid dim = )(", "-grid dim = (4294967295,1,1)", "(1,2)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := dim3([]byte(s))
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not quote the line", err)
			}
			return
		}
		again := "-grid dim = (" + strconv.Itoa(int(d[0])) + "," + strconv.Itoa(int(d[1])) + "," + strconv.Itoa(int(d[2])) + ")"
		if d2, err := dim3([]byte(again)); err != nil || d2 != d || slices.Contains(d[:], 0) {
			t.Fatalf("%q gives %v; %q gives %v, %v", s, d, again, d2, err)
		}
	})
}

const fuzzHeader = "-kernel name = _Z3fooPf\n-kernel id = 1\n-grid dim = (2,1,1)\n-block dim = (40,1,1)\n-shmem = 0\n-nregs = 16\n-binary version = 90\n-cuda stream id = 0\n-shmem base_addr = 0x00007f0000000000\n-local mem base_addr = 0x00007f0001000000\n-nvbit version = 1.7.1\n-accelsim tracer version = 5\n-enable lineinfo = 0\n\n#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n"

// FuzzRawTrace: a raw kernel trace (header and instruction lines) is
// post-processed or refused with an error naming the file and its line;
// what is post-processed holds every instruction line of the input, in
// .tracez and in text, once.
func FuzzRawTrace(f *testing.F) {
	for _, s := range []string{
		fuzzHeader + "0 0 0 0 0010 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0\n1 0 0 1 0020 0000ffff 0 EXIT 0 0\n0 0 0 0 0030 ffffffff 0 EXIT 0 0\n",
		fuzzHeader + "0 0 0 0 0 0 0 0 0 0 0 0010 ffffffff 0 EXIT 0 0\n\n1 0 0 0 0 0 0 0 0 0 0 0010 ffffffff 2 R1 R2 LDGSTS.E 0 0\n",
		fuzzHeader + "2 0 0 0 0010 ffffffff 0 EXIT 0 0\n",
		fuzzHeader + "0 0 0 5 0010 ffffffff 0 EXIT 0 0\n",
		"0 0 0 0 0010 ffffffff 0 EXIT 0 0\n",
		"-grid dim = (1,1,1)\n", "-grid dim = (1,1,1)\n-block dim = (1,1,1)\n#x\n0 0 0 0 10 ffffffff 0 NOP 0 0\n-late header\n",
		"-grid dim = (65536,65536,65536)\n-block dim = (1024,1,1)\n0 0 0 0 10 ffffffff 0 NOP 0 0\n",
		"-grid dim = (1,1,1)\n-block dim = (1,1,1)\n-kernel name = a\x00b\n0 0 0 0 10 ffffffff 0 NOP 0 0\n",
	} {
		f.Add([]byte(s))
	}
	pos := regexp.MustCompile(`kernel-1\.trace(:\d+: |: no -grid dim| \(after line \d+\))`)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		var want [][]byte // instructions without their ids
		ldgsts := map[[4]uint32]int{}
		layout := 0
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if len(line) == 0 || line[0] == '-' || line[0] == '#' {
				continue
			}
			if layout == 0 {
				layout, _ = detectLayout(line)
			}
			var ids lineIDs
			if layout != 0 && parseIDs(line, layout, &ids) {
				// Of each warp's LDGSTS lines the 1st, 3rd, ... go.
				inst := line[ids.rest:]
				if isLDGSTS(inst) {
					key := [4]uint32(ids.v[:4])
					ldgsts[key]++
					if ldgsts[key]%2 == 1 {
						continue
					}
				}
				want = append(want, inst)
			}
		}
		for _, text := range []bool{false, true} {
			dir := t.TempDir()
			writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
			if err := os.WriteFile(filepath.Join(dir, "kernel-1.trace"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			err := Run(context.Background(), dir, fuzzOpts(t, text))
			if err != nil {
				if !pos.MatchString(err.Error()) {
					t.Fatalf("error %q names no file and line", err)
				}
				return
			}
			var got [][]byte
			if text {
				b, err := os.ReadFile(filepath.Join(dir, "kernel-1.traceg"))
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range bytes.Split(b, []byte{'\n'}) {
					if len(l) > 0 && l[0] != '#' && l[0] != '-' && !bytes.HasPrefix(l, []byte("thread block")) && !bytes.HasPrefix(l, []byte("warp =")) &&
						!bytes.HasPrefix(l, []byte("insts =")) && !bytes.HasPrefix(l, []byte("cluster")) {
						got = append(got, l)
					}
				}
			} else {
				r, err := tracez.Open(filepath.Join(dir, "kernel-1.tracez"))
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range r.Blocks {
					for _, w := range b.Warps {
						if err := r.Insts(w, func(l []byte) error { got = append(got, bytes.Clone(l)); return nil }); err != nil {
							t.Fatal(err)
						}
					}
				}
				r.Close()
			}
			slices.SortFunc(got, bytes.Compare)
			w := slices.Clone(want)
			slices.SortFunc(w, bytes.Compare)
			if !slices.EqualFunc(got, w, bytes.Equal) {
				t.Fatalf("text=%v: %d instructions out, %d in:\n%q\n%q", text, len(got), len(w), got, w)
			}
		}
	})
}

// FuzzRawKernelList: a raw kernel list is post-processed or refused with
// an error naming the list and line; what is written is a kernelslist.g
// that kernellist reads, naming only post-processed traces inside the
// trace directory, and nothing is written outside it.
func FuzzRawKernelList(f *testing.F) {
	for _, s := range []string{
		"MemcpyHtoD,0x00007f1b2c000000,4096\nkernel-1.trace\nMemcpyHtoD,0x00007f1b2c100000,8\nkernel-2.trace\n",
		"kernel-1.trace\r\n\r\nkernel-1.trace\n", "kernel-2.trace.xz\n", "kernel-3.trace\n", "Memcpy garbage\nkernel-1.trace\n",
		"kernels/kernel-1.trace\n", "kernels/../kernel-1.trace\n", "launch kernel-1\n", "kernel-1.tracez\n",
	} {
		f.Add(s)
	}
	trace := "-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-accelsim tracer version = 3\n0 0 0 0 0010 ffffffff 0 EXIT 0 0\n"
	pos := regexp.MustCompile(`kernelslist:\d+: `)
	f.Fuzz(func(t *testing.T, list string) {
		sandbox := t.TempDir()
		dir := filepath.Join(sandbox, "a", "b", "traces")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "kernelslist", list)
		// Every trace the list names is there, wherever it points within the sandbox.
		for _, l := range strings.Split(list, "\n") {
			l = strings.TrimSpace(l)
			p := filepath.Join(dir, l)
			if !strings.HasPrefix(l, "kernel") || !strings.HasSuffix(l, ".trace") || !strings.HasPrefix(p, sandbox+string(filepath.Separator)) || strings.Contains(l, "\x00") {
				continue
			}
			if os.MkdirAll(filepath.Dir(p), 0o755) != nil || os.WriteFile(p, []byte(trace), 0o644) != nil {
				return
			}
		}
		before := tree(t, sandbox)
		err := Run(context.Background(), dir, fuzzOpts(t, false))
		if err != nil {
			if !pos.MatchString(err.Error()) && !strings.Contains(err.Error(), "would both be written") {
				t.Fatalf("error %q names no line of the list", err)
			}
			return
		}
		for p := range tree(t, sandbox) {
			if !before[p] && !strings.HasPrefix(p, "a/b/traces/") {
				t.Fatalf("list %q: post-processing wrote %s, outside the trace directory", list, p)
			}
		}
		l, err := kernellist.Read(filepath.Join(dir, kernellist.Name))
		if err != nil {
			t.Fatalf("list %q gives a kernelslist.g that does not read: %v", list, err)
		}
		for _, c := range l.Kernels() {
			if !filepath.IsLocal(c.TraceFile) || !strings.HasSuffix(c.TraceFile, ".tracez") {
				t.Fatalf("list %q gives kernel line %q", list, c.Text)
			}
			if _, err := tracez.CountInsts(l.TracePath(c)); err != nil {
				t.Fatalf("list %q: %v", list, err)
			}
		}
	})
}

// tree lists the files under root, relative and slash-separated.
func tree(t *testing.T, root string) map[string]bool {
	files := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return files
}

// TestRawKernelListLongLine: a list line past the 1 MiB limit (too long
// for a fuzz seed) fails naming the list and line, as FuzzRawKernelList
// wants of every error.
func TestRawKernelListLongLine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "kernelslist", "MemcpyHtoD,0x1,1\n"+strings.Repeat("k", 2<<20)+"\n")
	err := Run(context.Background(), dir, fuzzOpts(t, false))
	if err == nil || !strings.Contains(err.Error(), "kernelslist:2: ") {
		t.Fatalf("err = %v, want one naming kernelslist:2", err)
	}
}
