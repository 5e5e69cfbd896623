package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// timedProfile is quickstartProfile with each launch's duration
// (gpu__time_duration.sum, in microseconds as ncu prints it): 3, 10, 2.5
// and 2 µs, 17,500 ns in all.
var timedProfile = strings.NewReplacer(
	`"smsp__inst_executed.sum"`, `"smsp__inst_executed.sum","gpu__time_duration.sum"`,
	`"inst"`, `"inst","usecond"`,
	`"48"`, `"48","3"`, `"208"`, `"208","10"`, `"60"`, `"60","2.5"`, `"14"`, `"14","2"`,
).Replace(quickstartProfile)

// uploadTimed uploads the quickstart sample as id with timedProfile
// named in its metadata.json; without real timing when realTiming is
// false (its real_timing.json and metadata.json's real_timing gone).
func uploadTimed(t *testing.T, s *servertest.TestServer, id string, realTiming bool) {
	t.Helper()
	uploadWithProfiles(t, s, id, map[string]string{"profiles/ncu.csv": timedProfile}, func(dir string, meta map[string]any) {
		if realTiming {
			return
		}
		delete(meta, "real_timing")
		if err := os.Remove(filepath.Join(dir, "real_timing.json")); err != nil {
			t.Fatal(err)
		}
	})
}

type compared struct {
	Kernels []struct {
		KernelID   int
		MeasuredNs *float64
	}
	Comparison *struct {
		KernelsCompared int
		Mape            float64
		MeasuredTotalNs float64
	}
}

// runCompared launches a run of the trace and returns its kernels'
// measured times and comparison once it succeeded.
func runCompared(t *testing.T, s *servertest.TestServer, traceID string) compared {
	t.Helper()
	var l struct{ LaunchRun struct{ ID string } }
	s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"traceId": traceID, "simConfig": simconfigtest.H100}}, &l)
	var r struct {
		Run struct {
			State string
			compared
		}
	}
	testkit.Eventually(t, 30*time.Second, "run of "+traceID+" succeeded", func() bool {
		s.MustDo(t, `query($id: ID!) { run(id: $id) { state kernels { kernelId measuredNs }
			comparison { kernelsCompared mape measuredTotalNs } } }`, map[string]any{"id": l.LaunchRun.ID}, &r)
		if r.Run.State == "FAILED" {
			t.Fatalf("run of %s failed", traceID)
		}
		return r.Run.State == "SUCCEEDED"
	})
	return r.Run.compared
}

// TestMeasuredTimesFromProfiles: a trace without real timing whose
// hardware profile holds launch durations (gpu__time_duration.sum) has
// its runs compared with them (MAPE and all), and says so
// (Trace.measuredTimesFrom); one with both compares with its real timing
// and says the profile's durations are not used.
func TestMeasuredTimesFromProfiles(t *testing.T) {
	t.Parallel()
	sim := fakesim.Build(t)
	cfgDir := simconfigtest.Write(t, t.TempDir())
	s := servertest.Server(t, func(c *app.Config) {
		c.SimCmd = []string{"env", "FAKESIM_MODE=ok", sim}
		c.SimConfigsDir = cfgDir
	})
	uploadTimed(t, s, "profiled", false)
	uploadTimed(t, s, "both", true)
	waitTrace(t, s, "profiled", "READY")
	waitTrace(t, s, "both", "READY")

	from := func(id string) *string {
		var r struct {
			Trace struct{ MeasuredTimesFrom *string }
		}
		s.MustDo(t, `query($id: ID!) { trace(id: $id) { measuredTimesFrom } }`, map[string]any{"id": id}, &r)
		return r.Trace.MeasuredTimesFrom
	}
	if got := from("profiled"); got == nil || *got != "profiles/ncu.csv: gpu__time_duration.sum" {
		t.Errorf("profiled: measured times from %v", deref(got))
	}
	if got := from("both"); got == nil || !strings.HasPrefix(*got, "real_timing.json: duration_ns (real timing first") || !strings.Contains(*got, "profiles/ncu.csv: gpu__time_duration.sum") {
		t.Errorf("both: measured times from %v", deref(got))
	}

	r := runCompared(t, s, "profiled")
	if c := r.Comparison; c == nil || c.KernelsCompared != 4 || c.MeasuredTotalNs != 17500 || !(c.Mape > 0) {
		t.Fatalf("profiled: comparison %+v", c)
	}
	want := map[int]float64{1: 3000, 2: 10000, 3: 2500, 4: 2000}
	for _, k := range r.Kernels {
		if k.MeasuredNs == nil || *k.MeasuredNs != want[k.KernelID] {
			t.Errorf("profiled: kernel %d measured %v, want %v", k.KernelID, deref(k.MeasuredNs), want[k.KernelID])
		}
	}
	r = runCompared(t, s, "both")
	if c := r.Comparison; c == nil || c.KernelsCompared != 4 || c.MeasuredTotalNs != 17000 {
		t.Fatalf("both: comparison %+v, want real timing's 17,000 ns", c)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
