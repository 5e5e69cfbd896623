package runs_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestSampledRunCheckIsPushed: a sampled run's check is computed on read,
// so a full run that succeeds after it changes what the sampled run reads.
// Subscribers are told: the full run's success sends a runUpdated of the
// sampled run, and that message carries the check. Until then the sampled
// run stands for its config among the configs compared, marked sampled;
// then the full run does.
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
			checkConfigRun(t, s, r.ID, true)
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
					checkConfigRun(t, s, full.ID, false)
					return
				}
			}
		})
	}
}

// checkConfigRun checks that the run of the sampled trace's config among
// its configs compared, and in its correlation, is run id, sampled or not.
func checkConfigRun(t *testing.T, s *servertest.TestServer, id string, sampled bool) {
	t.Helper()
	var out struct {
		Trace struct {
			ConfigComparison []struct {
				SimConfig string
				Sampled   bool
				Run       *struct {
					ID       string
					Sampling *struct{ Representatives int }
				}
			}
			ConfigCorrelation struct{ Runs []*struct{ ID string } }
		}
	}
	s.MustDo(t, `{ trace(id: "`+sampledID+`") { configComparison { simConfig sampled run { id sampling { representatives } } }
		configCorrelation { runs { id } } } }`, nil, &out)
	cs, cor := out.Trace.ConfigComparison, out.Trace.ConfigCorrelation.Runs
	if len(cs) != 1 || cs[0].SimConfig != simconfigtest.H100 || cs[0].Run == nil || cs[0].Run.ID != id || cs[0].Sampled != sampled ||
		(cs[0].Run.Sampling != nil) != sampled || len(cor) != 1 || cor[0] == nil || cor[0].ID != id {
		b, _ := json.Marshal(out)
		t.Fatalf("configs compared %s: want run %s, sampled %v", b, id, sampled)
	}
}

// getCSV reads a CSV download of the server with its token.
func getCSV(t *testing.T, s *servertest.TestServer, path string) [][]string {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("GET %s: %d rows, %v", path, len(rows), err)
	}
	return rows
}
