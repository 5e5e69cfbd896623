package runs_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestSampledRunCheckIsPushed: a sampled run's check is computed on read,
// so a full run that succeeds after it changes what the sampled run reads.
// Subscribers are told: the full run's success sends a runUpdated of the
// sampled run, and that message carries the check.
func TestSampledRunCheckIsPushed(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := sampledServer(t, u, []string{"FAKESIM_MODE=ok"})
			plan := planSampling(t, s)
			r := launchSampled(t, s, plan.ID, false)
			done := waitSampled(t, s, r.ID, "SUCCEEDED")
			if done.Sampling.Check != nil {
				t.Fatalf("a check with no full run: %+v", done.Sampling.Check)
			}
			sub := s.Subscribe(t, "graphql-transport-ws", `subscription($id: ID) { runUpdated(id: $id) { `+sampledRunFields+` } }`,
				map[string]any{"id": r.ID})
			var first struct{ RunUpdated sampledRunView }
			if err := sub.Next(10*time.Second, &first); err != nil || first.RunUpdated.Sampling.Check != nil {
				t.Fatalf("first message: %v, check %+v", err, first.RunUpdated.Sampling)
			}
			full := launchFull(t, s)
			deadline := time.Now().Add(60 * time.Second)
			for {
				var m struct{ RunUpdated sampledRunView }
				if err := sub.Next(time.Until(deadline), &m); err != nil {
					t.Fatalf("no runUpdated of sampled run %s with its check after full run %s: %v", r.ID, full.ID, err)
				}
				if c := m.RunUpdated.Sampling.Check; c != nil {
					if c.FullRun.ID != full.ID || c.KernelsCompared == 0 {
						b, _ := json.Marshal(c)
						t.Fatalf("check %s, want one against %s", b, full.ID)
					}
					return
				}
			}
		})
	}
}
