package l2warm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/accelsim/tracez"
)

// header is a post-processed trace's header of tracer version v.
func header(v int) string {
	h := "-kernel name = _Z1kPf\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (64,1,1)\n-shmem = 0\n-nregs = 16\n-binary version = 61\n-cuda stream id = 0\n-shmem base_addr = 0x00007f0e8e000000\n-local mem base_addr = 0x00007f0e8c000000\n-nvbit version = 1.5.3\n"
	h += fmt.Sprintf("-accelsim tracer version = %d\n", v)
	if v >= 5 {
		h += "-enable lineinfo = 0\n"
	}
	return h
}

// insts are instruction lines of every address mode (version 3: no
// immediate; imm appends one) and what lines they touch.
func insts(imm string) ([]string, l2warm.Print) {
	return []string{
			// mode 0: two active lanes, 4-byte loads, the second across lines 0x11 and 0x12.
			"0010 00000003 1 R2 LDG.E 1 R4 4 0 0x800 0x8fe" + imm,
			// mode 1: 32 lanes × 8 bytes from 0x2000: lines 0x40, 0x41.
			"0020 ffffffff 1 R4 LDG.E.64 1 R6 8 1 0x2000 8" + imm,
			// mode 2: base then deltas: 0x4000, +256, −512: lines 0x80, 0x82, 0x7e.
			"0030 00000007 0 STG.E 2 R4 R6 4 2 0x4000 256 -512" + imm,
			// a shared-memory store and an instruction without memory: nothing.
			"0040 ffffffff 0 STS 2 R4 R6 4 1 0x100 4" + imm,
			"0050 ffffffff 1 R8 IADD 2 R4 R6 0" + imm,
			// mode 1 under a mask with a hole: only the first run of lanes (2) gets addresses.
			"0060 0000000b 1 R2 LDG.E.128 1 R4 16 1 0x10000 16" + imm,
		}, l2warm.Print{
			Touched: l2warm.Lines{{Lo: 0x10, Hi: 0x13}, {Lo: 0x40, Hi: 0x42}, {Lo: 0x7e, Hi: 0x7f}, {Lo: 0x80, Hi: 0x81}, {Lo: 0x82, Hi: 0x83}, {Lo: 0x200, Hi: 0x201}},
			Written: l2warm.Lines{{Lo: 0x7e, Hi: 0x7f}, {Lo: 0x80, Hi: 0x81}, {Lo: 0x82, Hi: 0x83}}, // the STG's
		}
}

func traceg(t *testing.T, dir, name string, v int, lines []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(header(v) + "\n#traces format = ...\n\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\n")
	fmt.Fprintf(&b, "insts = %d\n%s\n\nwarp = 1\ninsts = 0\n\n#END_TB\n", len(lines), strings.Join(lines, "\n"))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func tracezFile(t *testing.T, dir, name string, v int, lines []string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := tracez.NewEncoder(2, 1) // two instructions a frame: several frames
	if err != nil {
		t.Fatal(err)
	}
	w, err := tracez.NewWriter(f, []byte(header(v)), enc.SubchunkInsts(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.BeginBlock(tracez.BlockHeader{}); err != nil {
		t.Fatal(err)
	}
	bs := make([][]byte, len(lines))
	for i, l := range lines {
		bs[i] = []byte(l)
	}
	frames, _ := enc.AppendWarp(nil, nil, bs)
	if err := w.WriteWarp(uint64(len(lines)), frames); err != nil {
		t.Fatal(err)
	}
	if err := w.EndBlock(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFootprint(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		v     int
		imm   string
		write func(*testing.T, string, string, int, []string) string
	}{
		{"kernel-1.traceg", 3, "", traceg},
		{"kernel-2.traceg", 5, " 0", traceg},
		{"kernel-3.tracez", 3, "", tracezFile},
		{"kernel-4.tracez", 4, " 16", tracezFile},
	} {
		lines, want := insts(c.imm)
		got, err := l2warm.Footprint(c.write(t, dir, c.name, c.v, lines))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s (version %d): %v, want %v", c.name, c.v, got, want)
		}
	}
}

func TestFootprintLineInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kernel-1.traceg")
	text := strings.Replace(header(5), "lineinfo = 0", "lineinfo = 1", 1) + "\nwarp = 0\ninsts = 1\n7 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x1000 0\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := l2warm.Footprint(path)
	if want := (l2warm.Lines{{Lo: 0x20, Hi: 0x21}}); err != nil || !reflect.DeepEqual(got.Touched, want) {
		t.Fatalf("%v, %v; want %v", got, err, want)
	}
}

func TestFootprintMalformed(t *testing.T) {
	dir := t.TempDir()
	lines, _ := insts("")
	for _, c := range []struct{ bad, want string }{
		{"0070 ffffffff 1 R2 LDG.E 1 R4 4 1 0xzz 8", `:28: base address "0xzz" is not hex`},
		{"0070 ffffffff 1 R2 LDG.E 1 R4 4 0 0x10", ":28: address: line ends early"},
		{"0070 fffffffg 1 R2 LDG.E 1 R4 4 0 0x10", `:28: mask "fffffffg" is not hex`},
		{"0070 ffffffff 1 R2 LDG.E 1 R4 4 7 0x10", ":28: address mode 7"},
	} {
		path := traceg(t, dir, "kernel-9.traceg", 3, append(append([]string{}, lines...), c.bad))
		_, err := l2warm.Footprint(path)
		if err == nil || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("%q: %v, want %q", c.bad, err, path+c.want)
		}
	}
	path := tracezFile(t, dir, "kernel-9.tracez", 3, []string{lines[0], "0070 ffffffff 1 R2 LDG.E 1 R4 4 2 0x10 x"})
	if _, err := l2warm.Footprint(path); err == nil || !strings.Contains(err.Error(), path+": block 0 (0,0,0) warp 0 instruction 2: delta") {
		t.Errorf("tracez: %v", err)
	}
}

func TestLines(t *testing.T) {
	a := l2warm.Lines{{Lo: 0, Hi: 4}, {Lo: 10, Hi: 12}}
	b := l2warm.Lines{{Lo: 2, Hi: 6}, {Lo: 12, Hi: 13}, {Lo: 20, Hi: 21}}
	check := func(name string, got, want l2warm.Lines) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	check("union", l2warm.Union(a, b), l2warm.Lines{{Lo: 0, Hi: 6}, {Lo: 10, Hi: 13}, {Lo: 20, Hi: 21}})
	check("intersect", l2warm.Intersect(a, b), l2warm.Lines{{Lo: 2, Hi: 4}})
	check("subtract", l2warm.Subtract(a, b), l2warm.Lines{{Lo: 0, Hi: 2}, {Lo: 10, Hi: 12}})
	check("last", a.Last(3), l2warm.Lines{{Lo: 3, Hi: 4}, {Lo: 10, Hi: 12}})
	if n := l2warm.Union(a, b).Count(); n != 10 {
		t.Errorf("count %d, want 10", n)
	}
}

// loads is a trace whose one warp loads 4 bytes at each line's start.
func loads(t *testing.T, dir string, id int, lines ...uint64) {
	t.Helper()
	access(t, dir, id, "1 R2 LDG.E 1 R4", lines)
}

// stores is one whose warp stores 4 bytes at each line's start.
func stores(t *testing.T, dir string, id int, lines ...uint64) {
	t.Helper()
	access(t, dir, id, "0 STG.E 2 R4 R6", lines)
}

func access(t *testing.T, dir string, id int, op string, lines []uint64) {
	t.Helper()
	var ls []string
	for _, l := range lines {
		ls = append(ls, fmt.Sprintf("0010 00000001 %s 4 0 0x%x", op, l<<l2warm.LineShift))
	}
	ls = append(ls, "0020 00000001 0 EXIT 0 0")
	traceg(t, dir, fmt.Sprintf("kernel-%d.traceg", id), 3, ls)
}

// fiveLaunches writes the kernel traces of five launches into dir:
// launch 1 touches lines 1..4, launch 2 writes lines 10..11 and 3, launch
// 3 touches line 20; a segment of launches 4 and 5 touches 1, 3, 10, 20,
// 30.
func fiveLaunches(t *testing.T, dir string) {
	t.Helper()
	loads(t, dir, 1, 1, 2, 3, 4)
	stores(t, dir, 2, 10, 11, 3)
	loads(t, dir, 3, 20)
	loads(t, dir, 4, 1, 10)
	loads(t, dir, 5, 3, 20, 30)
}

func TestPlan(t *testing.T) {
	dir := t.TempDir()
	fiveLaunches(t, dir)
	list := filepath.Join(dir, kernellist.Name)
	os.WriteFile(list, []byte("MemcpyHtoD,0x0000000000000080,128\nkernel-1.traceg\nkernel-2.traceg\nkernel-3.traceg\nkernel-4.traceg\nkernel-5.traceg\n"), 0o644)
	src, err := kernellist.Read(list)
	if err != nil {
		t.Fatal(err)
	}
	c := l2warm.NewCache(filepath.Join(t.TempDir(), "cache"))
	seg := []kernellist.Ref{{ID: 4}, {ID: 5}}
	for _, tc := range []struct {
		capacity uint64
		launches int
		order    []l2warm.Lines
		dirty    l2warm.Lines
	}{
		// All of L2: everything shared, oldest touched first (line 3 last
		// touched by launch 2).
		{1 << 20, 3, []l2warm.Lines{{{Lo: 1, Hi: 2}}, {{Lo: 3, Hi: 4}, {Lo: 10, Hi: 11}}, {{Lo: 20, Hi: 21}}}, l2warm.Lines{{Lo: 3, Hi: 4}, {Lo: 10, Hi: 11}}},
		// 2 lines: launches 3 and 2 seen (4 lines > 2 lines' bytes, so the
		// window stops with launch 2), the newest 2 lines kept.
		{2 * l2warm.LineBytes, 2, []l2warm.Lines{{{Lo: 10, Hi: 11}}, {{Lo: 20, Hi: 21}}}, l2warm.Lines{{Lo: 10, Hi: 11}}},
	} {
		w, err := l2warm.Plan(c, src, seg, tc.capacity)
		if err != nil {
			t.Fatal(err)
		}
		if w.Launches != tc.launches || !reflect.DeepEqual(w.Order, tc.order) || !reflect.DeepEqual(w.Dirty, tc.dirty) {
			t.Errorf("capacity %d: %d launches, order %v, dirty %v; want %d, %v, %v", tc.capacity, w.Launches, w.Order, w.Dirty, tc.launches, tc.order, tc.dirty)
		}
	}
	// A segment from the first launch warms nothing.
	if w, err := l2warm.Plan(c, src, []kernellist.Ref{{ID: 1}, {ID: 2}}, 1<<20); err != nil || len(w.Lines) != 0 || w.Launches != 0 {
		t.Errorf("first segment: %+v, %v", w, err)
	}
	// Launch 4 warming up launch 5: the lines 4 touches (1, 10) are its to
	// bring in; of 5's, those earlier launches touched (3, 20) are
	// warmed, 3 by a store (launch 2 wrote it), 30 by nobody (no earlier
	// launch touched it). The window still walks back from launch 4.
	w, err := l2warm.PlanAfterWarmup(c, src, seg, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := (l2warm.Lines{{Lo: 3, Hi: 4}, {Lo: 20, Hi: 21}}); w.Launches != 3 || !reflect.DeepEqual(w.Lines, want) || !reflect.DeepEqual(w.Dirty, l2warm.Lines{{Lo: 3, Hi: 4}}) {
		t.Errorf("after a launch of warm-up: %d launches, lines %v, dirty %v; want 3, %v, [3]", w.Launches, w.Lines, w.Dirty, want)
	}
	// Every kernel of the segment a warm-up: nothing to warm.
	if w, err := l2warm.PlanAfterWarmup(c, src, seg, 2, 1<<20); err != nil || len(w.Lines) != 0 {
		t.Errorf("all warm-up: %+v, %v", w, err)
	}
}

// TestCache: footprints are kept in the cache's directory, never beside
// the traces, and a new cache (a restart) reads them from there: a
// footprint file it finds answers for an unchanged trace.
func TestCache(t *testing.T) {
	dir, cdir := t.TempDir(), t.TempDir()
	loads(t, dir, 1, 5, 6, 9)
	path := filepath.Join(dir, "kernel-1.traceg")
	want := l2warm.Print{Touched: l2warm.Lines{{Lo: 5, Hi: 7}, {Lo: 9, Hi: 10}}, Written: l2warm.Lines{}}
	if got, err := l2warm.NewCache(cdir).Footprint(path); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, %v", got, err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("the trace directory holds %d files", len(es))
	}
	files, _ := filepath.Glob(filepath.Join(cdir, "*.lines"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	// Change the trace's addresses, keeping its size and time: a fresh
	// cache answers from its file, not from the trace.
	st, _ := os.Stat(path)
	text, _ := os.ReadFile(path)
	changed := strings.ReplaceAll(string(text), "0x280", "0x780")
	if changed == string(text) || os.WriteFile(path, []byte(changed), 0o644) != nil || os.Chtimes(path, st.ModTime(), st.ModTime()) != nil {
		t.Fatal("could not change the trace")
	}
	if got, _ := l2warm.Footprint(path); reflect.DeepEqual(got, want) {
		t.Fatal("the changed trace has the same footprint")
	}
	if got, err := l2warm.NewCache(cdir).Footprint(path); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("from the cache file: %v, %v", got, err)
	}
}

func TestL2(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes uint64
	}{
		{"SM6_TITANX", 64 * 128 * 16 * 12 * 2}, // 3 MB
		{"SM7_QV100", 32 * 128 * 24 * 32 * 2},  // 6 MB
	} {
		cfg := cascade.SimConfig{Name: c.name, Dir: filepath.Join("testdata", c.name)}
		l, err := l2warm.L2(cfg)
		if err != nil || l.Bytes != c.bytes || l.Flushed {
			t.Errorf("%s: %+v, %v; want %d bytes, not flushed", c.name, l, err, c.bytes)
		}
		cfg.Params = []cascade.SimParam{{Option: "-gpgpu_flush_l2_cache", Value: "1"}, {Option: "-gpgpu_n_mem", Value: "4"}}
		l, err = l2warm.L2(cfg)
		if err != nil || !l.Flushed || l.Bytes != c.bytes/uint64(map[string]int{"SM6_TITANX": 3, "SM7_QV100": 8}[c.name]) {
			t.Errorf("%s with overrides: %+v, %v", c.name, l, err)
		}
		cfg.Params = []cascade.SimParam{{Option: "-gpgpu_cache:dl2", Value: "S:x:128:16,L:B:m:L:P"}}
		if _, err := l2warm.L2(cfg); err == nil || !strings.Contains(err.Error(), `-gpgpu_cache:dl2 "S:x:128:16,L:B:m:L:P": sets "x"`) {
			t.Errorf("%s: bad dl2: %v", c.name, err)
		}
	}
}

func TestWriteKernel(t *testing.T) {
	dir := t.TempDir()
	// Lines 0x1000 to 0x1002 then 0x10, oldest first; 0x1001 and 0x1002
	// dirty.
	w := l2warm.Warm{Order: []l2warm.Lines{{{Lo: 0x1000, Hi: 0x1003}}, {{Lo: 0x10, Hi: 0x11}}}, Dirty: l2warm.Lines{{Lo: 0x1001, Hi: 0x1003}}}
	for _, like := range []string{"kernel-1.traceg", "kernel-1.tracez"} {
		lines, _ := insts("")
		var path string
		if strings.HasSuffix(like, "z") {
			path = tracezFile(t, dir, like, 3, lines)
		} else {
			path = traceg(t, dir, like, 3, lines)
		}
		name, err := l2warm.WriteKernel(dir, w, path)
		if err != nil {
			t.Fatal(err)
		}
		if !l2warm.IsTrace(name) || !strings.HasPrefix(name, "kernel") || filepath.Ext(name) != filepath.Ext(like) {
			t.Errorf("%s: warming kernel %q", like, name)
		}
		// Exactly the lines, the dirty ones stored to.
		got, err := l2warm.Footprint(filepath.Join(dir, name))
		want := l2warm.Print{Touched: l2warm.Lines{{Lo: 0x10, Hi: 0x11}, {Lo: 0x1000, Hi: 0x1003}}, Written: w.Dirty}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the warming kernel touches %v, %v; want %v", like, got, err, want)
		}
		if _, err := kernellist.ParseTraceFileName(name); err {
			t.Errorf("%q reads as a kernel of the trace", name)
		}
	}
	text, _ := os.ReadFile(filepath.Join(dir, "kernelwarm.traceg"))
	// A load of 0x1000 (a line: 4 bytes a lane), a store of 0x1001 and
	// 0x1002 (two: 8 bytes a lane), a load of 0x10.
	for _, inst := range []string{"0010 ffffffff 1 R4 LDG.E 1 R2 4 1 0x80000 4\n", "0018 ffffffff 0 STG.E.64 2 R2 R6 8 1 0x80080 8\n", "0020 ffffffff 1 R8 LDG.E 1 R2 4 1 0x800 4\n"} {
		if !strings.Contains(string(text), inst) {
			t.Errorf("the warming kernel has no %q", inst)
		}
	}
	if !strings.Contains(string(text), "-binary version = 61\n") || !strings.HasSuffix(string(text), "#END_TB\n") {
		t.Errorf("warming kernel:\n%s", text)
	}
	if name, err := l2warm.WriteKernel(dir, l2warm.Warm{}, filepath.Join(dir, "kernel-1.traceg")); name != "" || err != nil {
		t.Errorf("nothing to warm: %q, %v", name, err)
	}
}
