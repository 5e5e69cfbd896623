package servertests_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit/quickstart"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// qsProfile is a made-up Nsight Compute raw page (ncu --csv --page raw)
// of the quickstart trace's four launches, the names demangled as ncu
// prints them, with durations in microseconds; the numbers are invented.
// Its cycles are cycles*k for the k-th launch.
func qsProfile(cycles int) string {
	rows := []string{
		`"void vllm::rms_norm_kernel<c10::BFloat16>(T1 *, const T1 *, const T1 *, float, int, int)"`,
		`"void gemm_bf16_tile<64, 64>(const __nv_bfloat16 *, const __nv_bfloat16 *, __nv_bfloat16 *, int, int, int)"`,
		`"void vllm::act_and_mul_kernel<c10::BFloat16>(T1 *, const T1 *, int)"`,
		`"residual_add_kernel(__nv_bfloat16 *, const __nv_bfloat16 *, int)"`,
	}
	s := `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC","gpc__cycles_elapsed.max","gpu__time_duration.sum"` + "\n" +
		`"","","","","","","","","","cycle","usecond"` + "\n"
	for k, name := range rows {
		s += fmt.Sprintf(`"%d","4242","python3","h",%s,"1","7","0","9.0","%d","%d.5"`+"\n", k, name, cycles*(k+1), k+1)
	}
	return s
}

type profiled struct {
	ID       string
	State    string
	Warnings []string
	Profiles []struct {
		File    string
		Matched int
		Error   *string
	}
}

const profiledFields = `id state warnings profiles { file matched error }`

// nameProfiles rewrites the trace's metadata.json, as an uploader would,
// with the given profiles.
func nameProfiles(t *testing.T, s *servertest.TestServer, id string, names ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.TraceDir(id), "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	meta["profiles"] = names
	b, _ = json.MarshalIndent(meta, "", "  ")
	s.WriteFile(t, id, "metadata.json", b)
}

// cyclesOf returns each kernel's measured cycles (its counter "cycles"),
// by kernel id; a kernel without is absent.
func cyclesOf(t *testing.T, s *servertest.TestServer, id string) map[int]float64 {
	var r struct {
		Trace struct {
			Kernels struct {
				Nodes []struct {
					KernelID int
					Counters []struct {
						Statistic string
						Mean      float64
					}
				}
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { kernels(first: 10) { nodes { kernelId counters { statistic mean } } } } }`, map[string]any{"id": id}, &r)
	m := map[int]float64{}
	for _, k := range r.Trace.Kernels.Nodes {
		for _, c := range k.Counters {
			if c.Statistic == "cycles" {
				m[k.KernelID] = c.Mean
			}
		}
	}
	return m
}

// nextProfiled waits for an update of trace id that satisfies cond,
// failing on any update of it that is not READY: a change of its profiles
// never sends it through another state.
func nextProfiled(t *testing.T, sub *servertest.Subscription, id, what string, cond func(profiled) bool) profiled {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var r struct{ TraceUpdated profiled }
		if err := sub.Next(time.Until(deadline), &r); err != nil {
			t.Fatalf("trace %q: no update with %s: %v", id, what, err)
		}
		tr := r.TraceUpdated
		if tr.ID != id {
			continue
		}
		if tr.State != "READY" {
			t.Fatalf("trace %q went %s on a change of its profiles: %+v", id, tr.State, tr)
		}
		if cond(tr) {
			return tr
		}
	}
}

// TestProfilesOfReadyTrace: profiles uploaded to a trace that is ready
// already are read then, live, against its stored kernels, and it stays
// READY throughout (its post-processing does not run again): a profile
// added (metadata.json naming it), a malformed one added beside it (a
// warning naming its line and column; the good one's counters stay), a
// profile file changed in place, and one of another program (a warning
// naming its rows and why, nothing stored).
func TestProfilesOfReadyTrace(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	quickstart.Upload(t, s)
	id := quickstart.ID
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated { `+profiledFields+` } }`, nil)
	if m := cyclesOf(t, s, id); len(m) != 0 {
		t.Fatalf("counters before any profile: %v", m)
	}

	// Added: the file first, then metadata.json naming it.
	s.WriteFile(t, id, "profiles/ncu.csv", []byte(qsProfile(1000)))
	nameProfiles(t, s, id, "profiles/ncu.csv")
	tr := nextProfiled(t, sub, id, "its profile read", func(tr profiled) bool { return len(tr.Profiles) == 1 })
	if p := tr.Profiles[0]; p.File != "profiles/ncu.csv" || p.Matched != 4 || p.Error != nil {
		t.Fatalf("profile read as %+v", tr.Profiles)
	}
	if m := cyclesOf(t, s, id); len(m) != 4 || m[1] != 1000 || m[4] != 4000 {
		t.Fatalf("counters after the profile was added: %v", m)
	}

	// A malformed one beside it: a warning naming its line and column.
	bad := strings.Replace(qsProfile(1000), `"2000"`, `"20,00"`, 1)
	s.WriteFile(t, id, "profiles/bad.csv", []byte(bad))
	nameProfiles(t, s, id, "profiles/ncu.csv", "profiles/bad.csv")
	tr = nextProfiled(t, sub, id, "the malformed profile read", func(tr profiled) bool { return len(tr.Profiles) == 2 })
	if p := tr.Profiles[1]; p.Error == nil || !strings.HasPrefix(*p.Error, "profiles/bad.csv:4:") {
		t.Fatalf("malformed profile read as %+v", p)
	}
	if n := count(tr.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "profile profiles/bad.csv not read: profiles/bad.csv:4:") && strings.Contains(w, `"20,00"`)
	}); n != 1 {
		t.Fatalf("warnings %q", tr.Warnings)
	}
	if m := cyclesOf(t, s, id); len(m) != 4 || m[2] != 2000 {
		t.Fatalf("counters after a malformed profile was added: %v", m)
	}

	// The good profile changed in place, metadata.json as it was.
	s.WriteFile(t, id, "profiles/ncu.csv", []byte(qsProfile(3000)))
	tr = nextProfiled(t, sub, id, "the changed profile read", func(profiled) bool { return cyclesOf(t, s, id)[1] == 3000 })
	if n := count(tr.Warnings, func(w string) bool { return strings.HasPrefix(w, "profile profiles/bad.csv not read") }); n != 1 {
		t.Fatalf("warnings after a change: %q", tr.Warnings)
	}

	// One of another program alone: nothing matches, nothing stored.
	other := strings.NewReplacer("rms_norm", "softmax", "gemm_bf16_tile", "conv2d", "act_and_mul", "topk", "residual_add", "scatter").Replace(qsProfile(1000))
	s.WriteFile(t, id, "profiles/other.csv", []byte(other))
	nameProfiles(t, s, id, "profiles/other.csv")
	tr = nextProfiled(t, sub, id, "the other program's profile read", func(tr profiled) bool {
		return len(tr.Profiles) == 1 && tr.Profiles[0].File == "profiles/other.csv"
	})
	if tr.Profiles[0].Matched != 0 || tr.Profiles[0].Error != nil {
		t.Fatalf("other program's profile read as %+v", tr.Profiles)
	}
	if n := count(tr.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "profile profiles/other.csv: none of its 4 launches matches a traced kernel") && strings.Contains(w, "line 3, void vllm::softmax_kernel")
	}); n != 1 || count(tr.Warnings, func(w string) bool { return strings.Contains(w, "bad.csv") }) != 0 {
		t.Fatalf("warnings %q", tr.Warnings)
	}
	if m := cyclesOf(t, s, id); len(m) != 0 {
		t.Fatalf("counters of another program's profile: %v", m)
	}
	if st := query(t, s, id); st.State != "READY" || st.KernelCount != 4 {
		t.Fatalf("trace at the end: %+v", st)
	}
}

func count(ws []string, f func(string) bool) int {
	n := 0
	for _, w := range ws {
		if f(w) {
			n++
		}
	}
	return n
}
