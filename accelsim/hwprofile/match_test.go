package hwprofile_test

import (
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
