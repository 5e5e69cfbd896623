package hwprofile_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/hwprofile"
)

// vecadd is the trace testdata/ncu-raw.csv profiles: three launches in
// one context, traced with mangled names.
var vecadd = []hwprofile.Traced{
	{Context: "0x5581", ID: 1, Name: "_Z6vecAddPfS_S_i", Demangled: "vecAdd(float*, float*, float*, int)"},
	{Context: "0x5581", ID: 2, Name: "_Z5scalePffi", Demangled: "scale(float*, float, int)"},
	{Context: "0x5581", ID: 3, Name: "_Z6vecAddPfS_S_i", Demangled: "vecAdd(float*, float*, float*, int)"},
}

func addText(t *testing.T, m *hwprofile.Matcher, name, text string) hwprofile.Report {
	t.Helper()
	r, err := hwprofile.NewReader(strings.NewReader(text), name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Add(r, hwprofile.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func addFile(t *testing.T, m *hwprofile.Matcher, path string) hwprofile.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return addText(t, m, path, string(b))
}

func measured(m *hwprofile.Matcher, k int, stat string) hwprofile.Measured {
	return m.Values(k)[slices.Index(m.Stats(), stat)]
}

func TestMatch(t *testing.T) {
	m := hwprofile.NewMatcher(vecadd, hwprofile.Builtin().Stats())
	rep := addFile(t, m, "testdata/ncu-raw.csv")
	if rep.Launches != 3 || rep.Matched != 3 || rep.UnmatchedCount != 0 || rep.Passes != 1 || rep.GPU.Name != "Quadro GV100" {
		t.Fatalf("report %+v", rep)
	}
	if c := measured(m, 2, "cycles"); c.N != 1 || c.Mean() != 8911 {
		t.Fatalf("kernel 3's cycles %+v", c)
	}
	if c := measured(m, 1, "dram_writes"); c.N != 0 || hwprofile.Present(c.Mean()) {
		t.Fatalf("n/a measured: %+v", c)
	}
	// The same program profiled again: averaged, the spread kept.
	again := strings.Replace(mustRead(t, "testdata/ncu-raw.csv"), `"8,911"`, `"9,011"`, 1)
	addText(t, m, "again.csv", again)
	if c := measured(m, 2, "cycles"); c.N != 2 || c.Mean() != 8961 || c.Min != 8911 || c.Max != 9011 {
		t.Fatalf("kernel 3's cycles over two profiles %+v", c)
	}
}

// TestMatchRepeatedInOneFile: a profile holding the program's launches
// twice (no second header: one process launching them twice) counts
// each launch twice.
func TestMatchRepeatedInOneFile(t *testing.T) {
	text := mustRead(t, "testdata/ncu-raw.csv")
	rows := text[strings.Index(text, "\n\"0\",")+1:]
	for i := range 3 {
		rows = strings.Replace(rows, `"`+string(rune('0'+i))+`","4242"`, `"`+string(rune('3'+i))+`","4242"`, 1)
	}
	m := hwprofile.NewMatcher(vecadd, hwprofile.Builtin().Stats())
	rep := addText(t, m, "twice.csv", text+rows)
	if rep.Matched != 6 || rep.Passes != 2 {
		t.Fatalf("report %+v", rep)
	}
	if c := measured(m, 0, "warp_instructions"); c.N != 2 {
		t.Fatalf("%+v", c)
	}
}

// TestMatchFiltered: a profile of some kernels only (--kernel-name scale)
// matches them in order, the others keep no counters.
func TestMatchFiltered(t *testing.T) {
	text := mustRead(t, "testdata/ncu-raw.csv")
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, `"0","4242"`) && !strings.HasPrefix(l, `"2","4242"`) {
			keep = append(keep, l)
		}
	}
	m := hwprofile.NewMatcher(vecadd, hwprofile.Builtin().Stats())
	if rep := addText(t, m, "scale.csv", strings.Join(keep, "\n")); rep.Matched != 1 || rep.UnmatchedCount != 0 {
		t.Fatalf("report %+v", rep)
	}
	if measured(m, 0, "cycles").N != 0 || measured(m, 1, "cycles").N != 1 {
		t.Fatalf("matched the wrong launch")
	}
}

// TestMatchAnotherProgram: a profile of another program matches nothing,
// and says which rows and why.
func TestMatchAnotherProgram(t *testing.T) {
	other := []hwprofile.Traced{{ID: 1, Name: "_Z4gemmPfi", Demangled: "gemm(float*, int)"}}
	m := hwprofile.NewMatcher(other, hwprofile.Builtin().Stats())
	rep := addFile(t, m, "testdata/ncu-raw.csv")
	if rep.Matched != 0 || rep.UnmatchedCount != 3 || len(rep.Unmatched) != 3 {
		t.Fatalf("report %+v", rep)
	}
	u := rep.Unmatched[1]
	if u.Line != 12 || u.Kernel != "scale(float*, float, int)" || u.Why != "no traced kernel of that name within 4096 launches at the start of the trace" {
		t.Fatalf("unmatched %+v", u)
	}
	if measured(m, 0, "cycles").N != 0 {
		t.Fatal("measured")
	}
}

func TestSameKernel(t *testing.T) {
	for _, c := range []struct {
		name, demangled, profiled string
		want                      bool
	}{
		{"_Z6vecAddPfS_S_i", "vecAdd(float*, float*, float*, int)", "vecAdd(float *, float *, float *, int)", true},
		{"_Z6vecAddPfS_S_i", "", "_Z6vecAddPfS_S_i", true},
		{"_Z6vecAddPfS_S_i", "vecAdd(float*, float*, float*, int)", "_Z5scalePffi", false},
		{"_ZN4vllm15rms_norm_kernelIfEEvPfi", "void vllm::rms_norm_kernel<float>(float*, int)", "rms_norm_kernel", true},
		{"_ZN4vllm15rms_norm_kernelIfEEvPfi", "void vllm::rms_norm_kernel<float>(float*, int)", "void vllm::rms_norm_kernel<float>(float *, int)", true},
		{"vecAdd", "", "vecAdd(float*, float*, float*, int)", true},
		{"vecAdd", "", "vecSub(float*)", false},
	} {
		if got := hwprofile.SameKernel(c.name, c.demangled, c.profiled); got != c.want {
			t.Errorf("SameKernel(%q, %q, %q) = %v", c.name, c.demangled, c.profiled, got)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMatchProcesses: Nsight Compute numbers contexts per process, so two
// processes' context 1 are two contexts, paired with the trace's two in
// order of first appearance: each traced kernel gets its own process's
// launch once; a third process has no counterpart, its launches
// unmatched naming it, and a trace context no profile context is paired
// with is reported.
func TestMatchProcesses(t *testing.T) {
	var traced []hwprofile.Traced
	for _, ctx := range []string{"0x1", "0x2"} {
		for id := 1; id <= 3; id++ {
			traced = append(traced, hwprofile.Traced{Context: ctx, ID: id, Name: "_Z1kv", Demangled: "k()"})
		}
	}
	text := `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","gpc__cycles_elapsed.max"` + "\n" +
		`"","","","","","","","cycle"` + "\n"
	row := func(id, pid, cycles int) string {
		return fmt.Sprintf(`"%d","%d","p","h","k()","1","7","%d"`+"\n", id, pid, cycles)
	}
	two := text
	for i := range 3 {
		two += row(i, 100, 100+i) + row(i, 200, 200+i)
	}
	m := hwprofile.NewMatcher(traced, hwprofile.Builtin().Stats())
	rep := addText(t, m, "hw-2proc.csv", two)
	if rep.Launches != 6 || rep.Matched != 6 || rep.Passes != 1 || rep.Contexts != 2 || rep.TraceContexts != 2 || len(rep.Unpaired) != 0 {
		t.Fatalf("report %+v", rep)
	}
	for k := range traced {
		want := float64(100 + 100*(k/3) + k%3)
		if c := measured(m, k, "cycles"); c.N != 1 || c.Mean() != want {
			t.Errorf("kernel %d of context %s: cycles %+v, want %v once", traced[k].ID, traced[k].Context, c, want)
		}
	}

	// A third process: no counterpart.
	m = hwprofile.NewMatcher(traced, hwprofile.Builtin().Stats())
	rep = addText(t, m, "hw-3proc.csv", two+row(0, 300, 1))
	if rep.Matched != 6 || rep.UnmatchedCount != 1 || !strings.Contains(rep.Unmatched[0].Why, "process 300's context 1") || !strings.Contains(rep.Unmatched[0].Why, "no counterpart") {
		t.Errorf("third process: report %+v", rep)
	}

	// One process: the trace's second context is paired with none.
	one := text
	for i := range 3 {
		one += row(i, 100, 100+i)
	}
	m = hwprofile.NewMatcher(traced, hwprofile.Builtin().Stats())
	rep = addText(t, m, "hw-1proc.csv", one)
	if rep.Matched != 3 || rep.Contexts != 1 || !slices.Equal(rep.Unpaired, []string{"0x2"}) {
		t.Errorf("one process: report %+v", rep)
	}
}

// TestMatchPairsByName: a profile's context is paired with the trace's
// context that launches its first kernel soonest, so contexts running
// other kernels pair right whatever order they appear in.
func TestMatchPairsByName(t *testing.T) {
	traced := []hwprofile.Traced{
		{Context: "0x1", ID: 1, Name: "_Z1fv", Demangled: "f()"},
		{Context: "0x1", ID: 2, Name: "_Z1gv", Demangled: "g()"},
		{Context: "0x2", ID: 1, Name: "_Z1gv", Demangled: "g()"},
	}
	text := `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","gpc__cycles_elapsed.max"` + "\n" +
		`"","","","","","","","cycle"` + "\n" +
		`"0","100","p","h","g()","2","7","30"` + "\n" +
		`"0","100","p","h","f()","1","7","10"` + "\n" +
		`"1","100","p","h","g()","1","7","20"` + "\n"
	m := hwprofile.NewMatcher(traced, hwprofile.Builtin().Stats())
	rep := addText(t, m, "p.csv", text)
	if rep.Matched != 3 {
		t.Fatalf("report %+v", rep)
	}
	for k, want := range []float64{10, 20, 30} {
		if c := measured(m, k, "cycles"); c.N != 1 || c.Mean() != want {
			t.Errorf("kernel %d: cycles %+v, want %v", k, c, want)
		}
	}
}
