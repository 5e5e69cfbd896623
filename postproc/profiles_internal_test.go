package postproc

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/testkit"
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

// TestReadProfilesAgain: a ready trace's profiles read again
// (ReadProfiles) against its stored kernels replace its counters, its
// profiles and the profiles' warnings; its other warnings (a bad stats
// row's) stay, it stays READY, no move is reported, and the change is
// published. A trace that is not ready is left alone.
func TestReadProfilesAgain(t *testing.T) {
	r := newRig(t)
	files := processed()
	files["metadata.json"] = `{"profiles": ["prof/ncu.csv", "prof/bad.csv"]}`
	files["prof/ncu.csv"] = ncuProfile
	files["prof/bad.csv"] = strings.Replace(ncuProfile, `"2,512"`, `"25,12"`, 1)
	r.trace("prof", cascade.TraceProcessing, files)
	p := r.processor(1)
	r.run(p)
	r.mv.waitMoved(1)
	before := r.stored("prof")
	stats := slices.DeleteFunc(slices.Clone(before.Warnings), profileWarning)
	if len(stats) != 1 || !strings.Contains(stats[0], "stats_ctx_0x1") || len(before.Warnings) != 2 {
		t.Fatalf("warnings when ready %q", before.Warnings)
	}

	// The bad one fixed, a second good one added with durations.
	r.files("prof", map[string]string{
		"metadata.json": `{"profiles": ["prof/ncu.csv", "prof/bad.csv", "prof/timed.csv"]}`,
		"prof/bad.csv":  strings.Replace(ncuProfile, `"8,911"`, `"9,011"`, 1),
		"prof/timed.csv": strings.NewReplacer(`"gpc__cycles_elapsed.max"`, `"gpc__cycles_elapsed.max","gpu__time_duration.sum"`,
			`"cycle"`, `"cycle","usecond"`, `"8,823"`, `"8,823","2.5"`, `"8,911"`, `"8,911","3"`).Replace(ncuProfile),
	})
	r.trace("other", cascade.TraceUploading, processed())
	p.ReadProfiles("other")
	p.ReadProfiles("prof")
	// The store holds the profiles before the update is published: wait
	// for both, or the events below are counted before the second READY.
	readyEvents := func() int {
		r.mv.mu.Lock()
		defer r.mv.mu.Unlock()
		n := 0
		for _, e := range r.mv.events {
			if e == "prof READY" {
				n++
			}
		}
		return n
	}
	testkit.Eventually(t, 10*time.Second, "profiles read again", func() bool {
		return len(r.stored("prof").Profiles) == 3 && readyEvents() >= 2
	})
	tr := r.stored("prof")
	if tr.State != cascade.TraceReady || tr.KernelCount != before.KernelCount {
		t.Fatalf("after reading its profiles again: %+v", tr)
	}
	if !reflect.DeepEqual(tr.Warnings, stats) {
		t.Errorf("warnings %q, want the stats' %q alone", tr.Warnings, stats)
	}
	if p := tr.Profiles[1]; p.Error != "" || p.Matched != 2 {
		t.Errorf("bad.csv, fixed, read as %+v", p)
	}
	if p := tr.Profiles[2]; p.Durations != "gpu__time_duration.sum" || p.Sum == "" || slices.Contains(p.Stats, hwprofile.DurationStat) {
		t.Errorf("timed.csv read as %+v", p)
	}
	cs, _ := r.m.KernelCounters(context.Background(), "prof", 1, 2)
	if len(cs) != 2 || cs[0].Stat != "cycles" || cs[0].Count != 3 || cs[0].Max != 9011 || cs[1].Stat != hwprofile.DurationStat || cs[1].Mean != 3000 {
		t.Errorf("kernel 2's counters %+v", cs)
	}
	ready := readyEvents() // as it became ready, then as its profiles were read again
	r.mv.mu.Lock()
	defer r.mv.mu.Unlock()
	if len(r.mv.moved) != 1 || ready != 2 || slices.Contains(r.mv.events, "other UPLOADING") {
		t.Errorf("moves %q, events %q", r.mv.moved, r.mv.events)
	}
	if o := r.stored("other"); o.State != cascade.TraceUploading || len(o.Profiles) != 0 {
		t.Errorf("a trace not ready: %+v", o)
	}
}

// TestProfileUnpairedContext: a profile of one process's context, of a
// trace of two contexts, says which of the trace's contexts it gave
// nothing.
func TestProfileUnpairedContext(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteTree(t, dir, map[string]string{"ncu.csv": ncuProfile})
	var traced []hwprofile.Traced
	for _, ctx := range []string{"0x1", "0x2"} {
		for id := 1; id <= 2; id++ {
			traced = append(traced, hwprofile.Traced{Context: ctx, ID: id, Name: "_Z6vecAddPdS_S_i", Demangled: "vecAdd(double*, double*, double*, int)"})
		}
	}
	_, reads, warnings := readProfiles(dir, []string{"ncu.csv"}, traced, nil)
	if len(reads) != 1 || reads[0].Matched != 2 {
		t.Fatalf("reads %+v", reads)
	}
	want := "profile ncu.csv: the trace has 2 CUDA contexts, the profile 1 (a process's context each): the trace's context 0x2 is paired with none of the profile's, so its kernels have no counters from it"
	if !slices.Contains(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
}
