package servertests_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

type configComparison struct {
	SimConfig                 string
	Runs, Succeeded, Compared int
	KernelsCompared           int
}

// TestSweepUpdatedCarriesTheComparison: sweepUpdated brings the sweep's
// comparison per config in its first message and with each run that
// succeeded, holding that run (so a page shows it with the progress that
// counts it, without fetching the sweep again), and none with the other
// changes of a run (its start, its kernels one by one).
func TestSweepUpdatedCarriesTheComparison(t *testing.T) {
	t.Parallel()
	sim := fakesim.Build(t)
	cfgDir := simconfigtest.Write(t, t.TempDir())
	s := servertest.Server(t, func(c *app.Config) {
		c.SimCmd = []string{"env", "FAKESIM_MODE=ok", "FAKESIM_DELAY=100ms", sim}
		c.SimConfigsDir = cfgDir
		c.RunConcurrency = 1
	})
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: "qs"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "quickstart ready", func() bool {
		var r struct{ Trace *struct{ State string } }
		s.MustDo(t, `{ trace(id: "qs") { state } }`, nil, &r)
		return r.Trace != nil && r.Trace.State == "READY"
	})
	configs := []string{simconfigtest.H100, simconfigtest.RTX3070}
	var l struct{ LaunchSweep struct{ ID string } }
	s.MustDo(t, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"traceIds": []string{"qs"}, "simConfigs": configs}}, &l)
	sub := s.SubscribeNow(t, "graphql-transport-ws", `subscription($id: ID!) { sweepUpdated(id: $id) {
		sweep { progress { total done } } run { id state simConfig { name } }
		comparison { simConfig runs succeeded compared kernelsCompared } } }`, map[string]any{"id": l.LaunchSweep.ID})

	succeeded := map[string]bool{} // config: its run succeeded
	others, atFirst := 0, 0
	for first := true; ; first = false {
		var m struct {
			SweepUpdated struct {
				Sweep struct{ Progress struct{ Total, Done int } }
				Run   *struct {
					ID, State string
					SimConfig struct{ Name string }
				}
				Comparison []configComparison
			}
		}
		if err := sub.Next(time.Minute, &m); err != nil {
			t.Fatalf("sweepUpdated: %v", err)
		}
		u := m.SweepUpdated
		switch {
		case first:
			if u.Run != nil || len(u.Comparison) != 2 || u.Comparison[0].SimConfig != configs[0] || u.Comparison[1].Runs != 1 {
				t.Fatalf("first message: run %+v, comparison %+v; want no run and both configs", u.Run, u.Comparison)
			}
			// SubscribeNow returns before the server holds the
			// subscription: a run may have succeeded by then, and the
			// first message, the sweep as it is, counts it.
			for _, c := range u.Comparison {
				if c.Succeeded == 1 {
					succeeded[c.SimConfig] = true
				}
			}
			atFirst = len(succeeded)
		case u.Run.State == "SUCCEEDED":
			succeeded[u.Run.SimConfig.Name] = true
			if len(u.Comparison) != 2 {
				t.Fatalf("run %s succeeded: comparison %+v", u.Run.ID, u.Comparison)
			}
			for _, c := range u.Comparison {
				if want := succeeded[c.SimConfig]; (c.Succeeded == 1) != want || want && (c.Compared != 1 || c.KernelsCompared == 0) {
					t.Fatalf("after the run of %v succeeded: %+v", succeeded, c)
				}
			}
		default:
			others++
			if u.Comparison != nil {
				t.Fatalf("run %s %s: comparison %+v, want none", u.Run.ID, u.Run.State, u.Comparison)
			}
		}
		if p := u.Sweep.Progress; p.Total == 2 && p.Done == 2 && len(succeeded) == 2 {
			break
		}
	}
	if others == 0 && atFirst < len(configs) {
		t.Error("no message of a run's other changes")
	}
}

// TestSweepUpdatedOnRemoval: a run of the sweep removed with its trace is
// a message of sweepUpdated (QA: the sweep's progress and comparison shrank
// and its subscribers were never told): removedRunId names it, run is null,
// and the progress and comparison are the sweep's without it.
func TestSweepUpdatedOnRemoval(t *testing.T) {
	t.Parallel()
	sim := fakesim.Build(t)
	cfgDir := simconfigtest.Write(t, t.TempDir())
	s := servertest.Server(t, func(c *app.Config) {
		c.SimCmd = []string{"env", "FAKESIM_MODE=ok", sim}
		c.SimConfigsDir = cfgDir
	})
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	for _, id := range []string{"kept", "doomed"} {
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: id}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 30*time.Second, "traces ready", func() bool {
		var r struct{ Kept, Doomed *struct{ State string } }
		s.MustDo(t, `{ kept: trace(id: "kept") { state } doomed: trace(id: "doomed") { state } }`, nil, &r)
		return r.Kept != nil && r.Kept.State == "READY" && r.Doomed != nil && r.Doomed.State == "READY"
	})
	var l struct {
		LaunchSweep struct {
			ID   string
			Runs struct {
				Nodes []struct {
					ID    string
					Trace struct{ ID string }
				}
			}
		}
	}
	s.MustDo(t, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id runs { nodes { id trace { id } } } } }`,
		map[string]any{"in": map[string]any{"traceIds": []string{"kept", "doomed"}, "simConfigs": []string{simconfigtest.H100}}}, &l)
	var doomed string
	for _, r := range l.LaunchSweep.Runs.Nodes {
		if r.Trace.ID == "doomed" {
			doomed = r.ID
		}
	}
	testkit.Eventually(t, 30*time.Second, "the sweep's runs over", func() bool {
		var r struct {
			Sweep struct{ Progress struct{ Done int } }
		}
		s.MustDo(t, `query($id: ID!) { sweep(id: $id) { progress { done } } }`, map[string]any{"id": l.LaunchSweep.ID}, &r)
		return r.Sweep.Progress.Done == 2
	})
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription($id: ID!) { sweepUpdated(id: $id) {
		sweep { progress { total succeeded } } run { id } removedRunId comparison { simConfig runs succeeded } } }`,
		map[string]any{"id": l.LaunchSweep.ID})
	type message struct {
		SweepUpdated struct {
			Sweep struct {
				Progress struct{ Total, Succeeded int }
			}
			Run          *struct{ ID string }
			RemovedRunID *string `json:"removedRunId"`
			Comparison   []configComparison
		}
	}
	var m message
	if err := sub.Next(30*time.Second, &m); err != nil {
		t.Fatalf("first message: %v", err)
	}
	if p := m.SweepUpdated.Sweep.Progress; p.Total != 2 || m.SweepUpdated.RemovedRunID != nil {
		t.Fatalf("first message: %+v", m.SweepUpdated)
	}
	s.MustDo(t, `mutation { removeTrace(id: "doomed") }`, nil, nil)
	m = message{}
	if err := sub.Next(30*time.Second, &m); err != nil {
		t.Fatalf("no message of the removal: %v", err)
	}
	u := m.SweepUpdated
	if u.RemovedRunID == nil || *u.RemovedRunID != doomed || u.Run != nil {
		t.Fatalf("removal message: removedRunId %v, run %+v; want %s and no run", u.RemovedRunID, u.Run, doomed)
	}
	if p := u.Sweep.Progress; p.Total != 1 || p.Succeeded != 1 || len(u.Comparison) != 1 || u.Comparison[0].Runs != 1 {
		t.Fatalf("removal message: progress %+v, comparison %+v; want the one run left", p, u.Comparison)
	}
}
