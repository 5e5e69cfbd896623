package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// quickstartProfile is a made-up Nsight Compute raw page (ncu --csv
// --page raw; the shape of accelsim/hwprofile's testdata/ncu-raw.csv) of
// the quickstart trace's four launches, the names demangled as ncu
// prints them; the numbers are invented.
const quickstartProfile = `==PROF== Connected to process 4242 (/usr/bin/python3)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__sectors_read.sum","gpc__cycles_elapsed.max","smsp__inst_executed.sum"
"","","","","","","","","","","","sector","cycle","inst"
"0","4242","python3","h","void vllm::rms_norm_kernel<c10::BFloat16>(T1 *, const T1 *, const T1 *, float, int, int)","1","7","(64, 1, 1)","(2, 1, 1)","0","9.0","1,024","4,410","48"
"1","4242","python3","h","void gemm_bf16_tile<64, 64>(const __nv_bfloat16 *, const __nv_bfloat16 *, __nv_bfloat16 *, int, int, int)","1","7","(128, 1, 1)","(2, 2, 1)","0","9.0","8,192","12,500","208"
"2","4242","python3","h","void vllm::act_and_mul_kernel<c10::BFloat16>(T1 *, const T1 *, int)","1","7","(64, 1, 1)","(3, 1, 1)","0","9.0","n/a","3,300","60"
"3","4242","python3","h","residual_add_kernel(__nv_bfloat16 *, const __nv_bfloat16 *, int)","1","7","(32, 1, 1)","(2, 1, 1)","0","9.0","512","2,000","14"
`

// uploadWithProfiles uploads the quickstart sample as id with the given
// profiles (path in the trace: content), named in its metadata.json; edit,
// when not nil, changes the copy (its directory and metadata) first.
func uploadWithProfiles(t *testing.T, s *servertest.TestServer, id string, profiles map[string]string, edit func(dir string, meta map[string]any)) {
	t.Helper()
	src := t.TempDir()
	if err := os.CopyFS(src, os.DirFS(filepath.Join(testkit.ModuleRoot(), "samples", "quickstart"))); err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	b, _ := os.ReadFile(filepath.Join(src, "metadata.json"))
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	var names []string
	for rel, text := range profiles {
		names = append(names, rel)
		os.MkdirAll(filepath.Dir(filepath.Join(src, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(src, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta["profiles"] = names
	if edit != nil {
		edit(src, meta)
	}
	b, _ = json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(src, "metadata.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: id}); err != nil {
		t.Fatal(err)
	}
}

type counted struct {
	Trace struct {
		State    string
		Warnings []string
		Profiles []struct {
			File, Profiler, Gpu *string
			Launches, Matched   int
			Unmatched           int
			Statistics          []string
			Error               *string
		}
		Kernels struct {
			Nodes []struct {
				KernelID int
				Counters []struct {
					Statistic      string
					Mean, Min, Max float64
					Count          int
				}
			}
		}
	}
}

const countedQuery = `query($id: ID!) { trace(id: $id) { state warnings
  profiles { file profiler gpu launches matched unmatched statistics error }
  kernels(first: 10) { nodes { kernelId counters { statistic mean min max count } } } } }`

// TestProfileCountersThroughTheAPI: a trace uploaded with a hardware
// profile named in its metadata.json is READY with each kernel's counters
// (Kernel.counters) and says which profile it read (Trace.profiles); a
// malformed profile leaves the trace READY with a warning naming its
// line and column, and no counters.
func TestProfileCountersThroughTheAPI(t *testing.T) {
	s := servertest.Server(t)
	uploadWithProfiles(t, s, "counted", map[string]string{"profiles/ncu.csv": quickstartProfile}, nil)
	uploadWithProfiles(t, s, "garbled", map[string]string{"profiles/ncu.csv": strings.Replace(quickstartProfile, `"8,192"`, `"81,92"`, 1)}, nil)
	waitTrace(t, s, "counted", "READY")
	waitTrace(t, s, "garbled", "READY")

	var r counted
	s.MustDo(t, countedQuery, map[string]any{"id": "counted"}, &r)
	if n := len(r.Trace.Profiles); n != 1 {
		t.Fatalf("profiles %+v", r.Trace.Profiles)
	}
	p := r.Trace.Profiles[0]
	if *p.File != "profiles/ncu.csv" || *p.Profiler != "ncu" || p.Launches != 4 || p.Matched != 4 || p.Unmatched != 0 || p.Error != nil ||
		strings.Join(p.Statistics, ",") != "cycles,warp_instructions,dram_reads" {
		t.Fatalf("profile read as %+v (statistics %q)", p, p.Statistics)
	}
	ks := r.Trace.Kernels.Nodes
	if len(ks) != 4 {
		t.Fatalf("%d kernels", len(ks))
	}
	byStat := func(k int) map[string]float64 {
		m := map[string]float64{}
		for _, c := range ks[k].Counters {
			if c.Count != 1 || c.Min != c.Mean || c.Max != c.Mean {
				t.Errorf("kernel %d %s: %+v", ks[k].KernelID, c.Statistic, c)
			}
			m[c.Statistic] = c.Mean
		}
		return m
	}
	if m := byStat(1); m["cycles"] != 12500 || m["dram_reads"] != 8192 || m["warp_instructions"] != 208 || len(m) != 3 {
		t.Errorf("gemm's counters %v", m)
	}
	if m := byStat(2); m["cycles"] != 3300 || len(m) != 2 { // n/a DRAM reads: absent
		t.Errorf("act_and_mul's counters %v", m)
	}

	s.MustDo(t, countedQuery, map[string]any{"id": "garbled"}, &r)
	if len(r.Trace.Profiles) != 1 || r.Trace.Profiles[0].Error == nil || !strings.HasPrefix(*r.Trace.Profiles[0].Error, "profiles/ncu.csv:5:") {
		t.Fatalf("garbled profile read as %+v", r.Trace.Profiles)
	}
	found := false
	for _, w := range r.Trace.Warnings {
		found = found || strings.HasPrefix(w, `profile profiles/ncu.csv not read: profiles/ncu.csv:5:`) && strings.Contains(w, `"81,92": a comma that is not a thousands separator`)
	}
	if !found {
		t.Errorf("warnings %q", r.Trace.Warnings)
	}
	for _, k := range r.Trace.Kernels.Nodes {
		if len(k.Counters) != 0 {
			t.Errorf("kernel %d of a garbled profile has counters %+v", k.KernelID, k.Counters)
		}
	}
}
