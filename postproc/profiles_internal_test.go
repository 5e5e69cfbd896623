package postproc

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// ncuProfile is a made-up Nsight Compute raw page (ncu --csv --page raw,
// the shape of accelsim/hwprofile's testdata/ncu-raw.csv) of the
// processed() trace's two vecAdd launches.
const ncuProfile = `==PROF== Connected to process 4242 (/work/vecadd)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC","dram__sectors_read.sum","gpc__cycles_elapsed.max"
"","","","","","","","","","sector","cycle"
"0","4242","vecadd","h","vecAdd(double *, double *, double *, int)","1","7","0","7.0","2,512","8,823"
"1","4242","vecadd","h","vecAdd(double *, double *, double *, int)","1","7","0","7.0","n/a","8,911"
`

// TestFinishReadsProfiles: a trace whose metadata.json names profiles
// gets, as it becomes ready, each matched launch's counters on its
// kernel, averaged over the profiles that measured it with their spread;
// a malformed profile (its line and column) and one of another program
// (which rows, why) are warnings and give nothing; the trace is READY
// and says which profiles it read.
func TestFinishReadsProfiles(t *testing.T) {
	r := newRig(t)
	files := processed()
	files["metadata.json"] = `{"profiles": ["prof/ncu.csv", "prof/again.csv", "prof/bad.csv", "prof/other.csv", "prof/missing.csv"]}`
	files["prof/ncu.csv"] = ncuProfile
	files["prof/again.csv"] = strings.Replace(ncuProfile, `"8,911"`, `"9,011"`, 1)
	files["prof/bad.csv"] = strings.Replace(ncuProfile, `"2,512"`, `"25,12"`, 1)
	files["prof/other.csv"] = strings.ReplaceAll(ncuProfile, "vecAdd", "gemm")
	r.trace("prof", cascade.TraceProcessing, files)
	r.run(r.processor(1))
	if moved, _ := r.mv.waitMoved(1); !reflect.DeepEqual(moved, []string{"prof READY ran=false"}) {
		t.Fatalf("moved %q", moved)
	}
	tr := r.stored("prof")
	if len(tr.Profiles) != 5 {
		t.Fatalf("profiles %+v", tr.Profiles)
	}
	if p := tr.Profiles[0]; p.File != "prof/ncu.csv" || p.Profiler != "ncu" || p.Launches != 2 || p.Matched != 2 || p.Error != "" || !reflect.DeepEqual(p.Stats, []string{"cycles", "dram_reads"}) {
		t.Errorf("ncu.csv read as %+v", p)
	}
	if p := tr.Profiles[2]; !strings.HasPrefix(p.Error, `prof/bad.csv:4:`) || p.Matched != 0 {
		t.Errorf("bad.csv read as %+v", p)
	}
	if p := tr.Profiles[3]; p.Matched != 0 || p.Unmatched != 2 {
		t.Errorf("other.csv read as %+v", p)
	}
	if p := tr.Profiles[4]; p.Error != "not a file of the upload" {
		t.Errorf("missing.csv read as %+v", p)
	}
	want := []string{
		`profile prof/bad.csv not read: prof/bad.csv:4:`,
		`profile prof/other.csv: none of its 2 launches matches a traced kernel (a profile of another program?); line 4, gemm(double *, double *, double *, int): no traced kernel of that name`,
		`profile prof/missing.csv not read: not a file of the upload`,
	}
	for _, w := range want {
		found := false
		for _, got := range tr.Warnings {
			found = found || strings.HasPrefix(got, w)
		}
		if !found {
			t.Errorf("no warning %q in %q", w, tr.Warnings)
		}
	}
	cs, _ := r.m.KernelCounters(context.Background(), "prof", 1, 2)
	// Its DRAM reads are n/a in both: absent, not zero.
	if len(cs) != 1 || cs[0].Stat != "cycles" || cs[0].Mean != 8961 || cs[0].Min != 8911 || cs[0].Max != 9011 || cs[0].Count != 2 {
		t.Fatalf("kernel 2's counters %+v", cs)
	}
	if cs, _ := r.m.KernelCounters(context.Background(), "prof", 0, 1); len(cs) != 2 || cs[1].Mean != 2512 || cs[1].Count != 2 {
		t.Fatalf("kernel 1's counters %+v", cs)
	}
}
