package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/client"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/resolvers"
	"github.com/cascade-sim/cascade/runs"
)

// fakeStore is a Store in memory that counts its calls.
type fakeStore struct {
	traces   []cascade.Trace
	runs     []cascade.Run
	sweeps   []cascade.Sweep
	kernels  []cascade.Kernel
	counters []cascade.KernelCounter

	mu    sync.Mutex
	calls map[string]int
	pages []cascade.Page // the pages Traces was asked for
}

func (s *fakeStore) count(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[method]++
}

// called returns how many times each method was called, and forgets.
func (s *fakeStore) called() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// pageOf pages items by seq, newest first, as package db does.
func pageOf[T any](items []T, seq func(T) int64, p cascade.Page) (cascade.PageOf[T], error) {
	var out cascade.PageOf[T]
	limit, err := p.Limit()
	if err != nil {
		return out, err
	}
	after, hasAfter, err := cascade.ParseCursor(p.After)
	if err != nil {
		return out, err
	}
	sorted := slices.SortedFunc(slices.Values(items), func(a, b T) int { return int(seq(b) - seq(a)) })
	if p.Count {
		out.Total = int64(len(sorted))
	}
	for _, it := range sorted {
		if hasAfter && seq(it) >= after {
			continue
		}
		if len(out.Items) == limit {
			out.HasNext = true
			break
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

func (s *fakeStore) Trace(_ context.Context, id string) (cascade.Trace, error) {
	s.count("Trace")
	for _, t := range s.traces {
		if t.ID == id {
			return t, nil
		}
	}
	return cascade.Trace{}, cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", id)
}

func (s *fakeStore) Traces(_ context.Context, _ cascade.TraceFilter, p cascade.Page) (cascade.PageOf[cascade.Trace], error) {
	s.count("Traces")
	s.mu.Lock()
	s.pages = append(s.pages, p)
	s.mu.Unlock()
	return pageOf(s.traces, func(t cascade.Trace) int64 { return t.Seq }, p)
}

func (s *fakeStore) TracesByID(_ context.Context, ids []string) ([]cascade.Trace, error) {
	s.count("TracesByID")
	var ts []cascade.Trace
	for _, t := range s.traces {
		if slices.Contains(ids, t.ID) {
			ts = append(ts, t)
		}
	}
	return ts, nil
}

func (s *fakeStore) Kernels(_ context.Context, _, _ string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error) {
	s.count("Kernels")
	return pageOf(s.kernels, func(k cascade.Kernel) int64 { return int64(k.Seq) }, p)
}

func (s *fakeStore) KernelCounters(_ context.Context, _ string, from, to int) ([]cascade.KernelCounter, error) {
	s.count("KernelCounters")
	var out []cascade.KernelCounter
	for _, c := range s.counters {
		if c.Seq >= from && c.Seq < to {
			out = append(out, c)
		}
	}
	return out, nil
}

func (s *fakeStore) Run(_ context.Context, id string) (cascade.Run, error) {
	s.count("Run")
	for _, r := range s.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return cascade.Run{}, cascade.Errorf(cascade.ENOTFOUND, "run %q not found", id)
}

func (s *fakeStore) Runs(_ context.Context, f cascade.RunFilter, p cascade.Page) (cascade.PageOf[cascade.Run], error) {
	s.count("Runs")
	rs := slices.DeleteFunc(slices.Clone(s.runs), func(r cascade.Run) bool {
		return f.TraceID != "" && r.TraceID != f.TraceID || f.FailureClass != "" && r.FailureClass != f.FailureClass
	})
	return pageOf(rs, func(r cascade.Run) int64 { return r.Seq }, p)
}

// fakeRuns is a Launcher that knows no sim config and no run; what the
// tests do not call panics.
type fakeRuns struct{ resolvers.Launcher }

func (fakeRuns) Launch(_ context.Context, in runs.LaunchInput) (cascade.Run, error) {
	return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "simConfig: no sim config %q", in.SimConfig)
}

func (fakeRuns) Cancel(_ context.Context, id string) (cascade.Run, error) {
	return cascade.Run{}, cascade.Errorf(cascade.ENOTFOUND, "run %q not found", id)
}

func (s *fakeStore) Segments(context.Context, string) ([]cascade.Run, error) { return nil, nil }

func (s *fakeStore) Sweep(_ context.Context, id string) (cascade.Sweep, error) {
	for _, sw := range s.sweeps {
		if sw.ID == id {
			return sw, nil
		}
	}
	return cascade.Sweep{}, cascade.Errorf(cascade.ENOTFOUND, "sweep %q not found", id)
}

func (s *fakeStore) Sweeps(_ context.Context, p cascade.Page) (cascade.PageOf[cascade.Sweep], error) {
	return pageOf(s.sweeps, func(sw cascade.Sweep) int64 { return sw.Seq }, p)
}

func (s *fakeStore) SweepProgress(context.Context, string) (cascade.SweepProgress, error) {
	return cascade.SweepProgress{}, nil
}

// newStore holds traces t1..t<traces> and runs r1..r<runs>, run i of
// trace t<i mod traces + 1>.
func newStore(traces, runs int) *fakeStore {
	s := &fakeStore{}
	for i := 1; i <= traces; i++ {
		s.traces = append(s.traces, cascade.Trace{ID: fmt.Sprintf("t%d", i), Seq: int64(i), State: cascade.TraceReady, Prompts: []string{}})
	}
	for i := 1; i <= runs; i++ {
		s.runs = append(s.runs, cascade.Run{ID: fmt.Sprintf("r%d", i), Seq: int64(i), TraceID: fmt.Sprintf("t%d", i%traces+1), State: cascade.RunSucceeded})
	}
	return s
}

// newClient serves the schema on the fakes in process, as the server
// does (graph.NewServer), with no network.
func newClient(store *fakeStore) *client.Client {
	r := &resolvers.Resolver{DB: store, Runs: fakeRuns{}, Events: &events.Broker{}}
	return client.New(graph.NewServer(r, transport.Options{}))
}

// gqlError is an error of a GraphQL response.
type gqlError struct {
	Message    string
	Path       []any
	Extensions struct{ Code string }
}

// post runs query and decodes its data into out; it returns the errors.
func post(t *testing.T, c *client.Client, query string, out any, opts ...client.Option) []gqlError {
	t.Helper()
	resp, err := c.RawPost(query, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var errs []gqlError
	if len(resp.Errors) > 0 {
		if err := json.Unmarshal(resp.Errors, &errs); err != nil {
			t.Fatalf("errors %s: %v", resp.Errors, err)
		}
	}
	if out != nil && resp.Data != nil {
		b, _ := json.Marshal(resp.Data)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("data %s: %v", b, err)
		}
	}
	return errs
}

// TestTracesPaging pages through the traces with cursors; the store is
// asked to count only when the query selects totalCount.
func TestTracesPaging(t *testing.T) {
	store := newStore(5, 0)
	c := newClient(store)
	var seen []string
	var after *string
	for pages := 0; ; pages++ {
		var r struct {
			Traces struct {
				TotalCount int
				Edges      []struct {
					Cursor string
					Node   struct{ ID string }
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		const q = `query($after: String) { traces(first: 2, after: $after) { totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`
		if errs := post(t, c, q, &r, client.Var("after", after)); errs != nil {
			t.Fatal(errs)
		}
		if r.Traces.TotalCount != 5 {
			t.Errorf("totalCount %d, want 5", r.Traces.TotalCount)
		}
		for _, e := range r.Traces.Edges {
			seen = append(seen, e.Node.ID)
		}
		if n := len(r.Traces.Edges); n > 0 && *r.Traces.PageInfo.EndCursor != r.Traces.Edges[n-1].Cursor {
			t.Errorf("endCursor %q is not the last edge's %q", *r.Traces.PageInfo.EndCursor, r.Traces.Edges[n-1].Cursor)
		}
		if !r.Traces.PageInfo.HasNextPage {
			break
		}
		if pages > 5 {
			t.Fatalf("still a next page after %v", seen)
		}
		after = r.Traces.PageInfo.EndCursor
	}
	if want := []string{"t5", "t4", "t3", "t2", "t1"}; !slices.Equal(seen, want) {
		t.Fatalf("paged %v, want %v", seen, want)
	}
	for _, p := range store.pages {
		if !p.Count || p.First != 2 {
			t.Errorf("page %+v: want first 2, counted", p)
		}
	}

	store.pages = nil
	var r struct {
		Traces struct{ Nodes []struct{ ID string } }
	}
	if errs := post(t, c, `{ traces(first: 3) { nodes { id } } }`, &r); errs != nil {
		t.Fatal(errs)
	}
	if len(r.Traces.Nodes) != 3 || len(store.pages) != 1 || store.pages[0].Count {
		t.Fatalf("without totalCount: %d nodes, pages %+v: want 3, not counted", len(r.Traces.Nodes), store.pages)
	}

	errs := post(t, c, `{ traces(after: "nonsense") { totalCount } }`, nil)
	if len(errs) != 1 || errs[0].Extensions.Code != cascade.EINVALID {
		t.Fatalf("a bad cursor: %+v, want one %s", errs, cascade.EINVALID)
	}
}

// TestFirstZeroCountsOnly: first: 0 gives no nodes, with totalCount and
// pageInfo, as the connection convention has it; no first gives
// cascade.DefaultPageSize nodes, and a negative first is refused.
func TestFirstZeroCountsOnly(t *testing.T) {
	const n = cascade.DefaultPageSize + 10
	c := newClient(newStore(n, n))
	type conn struct {
		TotalCount int
		Nodes      []struct{ ID string }
		PageInfo   struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
	var r struct{ Traces, Runs conn }
	const sel = `{ totalCount nodes { id } pageInfo { hasNextPage endCursor } }`
	if errs := post(t, c, `{ traces(first: 0) `+sel+` runs(first: 0) `+sel+` }`, &r); errs != nil {
		t.Fatal(errs)
	}
	for name, cn := range map[string]conn{"traces": r.Traces, "runs": r.Runs} {
		if cn.TotalCount != n || len(cn.Nodes) != 0 || !cn.PageInfo.HasNextPage || cn.PageInfo.EndCursor != nil {
			t.Errorf("%s(first: 0): %+v; want totalCount %d, no nodes, a next page, no endCursor", name, cn, n)
		}
	}
	r.Traces, r.Runs = conn{}, conn{}
	if errs := post(t, c, `{ traces `+sel+` runs `+sel+` }`, &r); errs != nil {
		t.Fatal(errs)
	}
	if len(r.Traces.Nodes) != cascade.DefaultPageSize || len(r.Runs.Nodes) != cascade.DefaultPageSize {
		t.Errorf("without first: %d traces, %d runs; want %d of each", len(r.Traces.Nodes), len(r.Runs.Nodes), cascade.DefaultPageSize)
	}
	errs := post(t, c, `{ runs(first: -1) { totalCount } }`, nil)
	if len(errs) != 1 || errs[0].Extensions.Code != cascade.EINVALID || !strings.Contains(errs[0].Message, "first: must not be negative") {
		t.Fatalf("first: -1: %+v, want one %s naming first", errs, cascade.EINVALID)
	}
}

// TestMutationErrorCodes: a mutation's *cascade.Error reaches the client
// with its code and message, and no data.
func TestMutationErrorCodes(t *testing.T) {
	c := newClient(newStore(1, 0))
	var data map[string]any
	errs := post(t, c, `mutation { launchRun(input: {traceId: "t1", simConfig: "nope"}) { id } }`, &data)
	if len(errs) != 1 || errs[0].Extensions.Code != cascade.EINVALID || errs[0].Message != `simConfig: no sim config "nope"` ||
		len(errs[0].Path) != 1 || errs[0].Path[0] != "launchRun" {
		t.Fatalf("launchRun: %+v, want one %s at launchRun", errs, cascade.EINVALID)
	}
	if data != nil {
		t.Errorf("data %v, want null", data)
	}
	errs = post(t, c, `mutation { cancelRun(id: "r404") { id } }`, nil)
	if len(errs) != 1 || errs[0].Extensions.Code != cascade.ENOTFOUND {
		t.Fatalf("cancelRun: %+v, want one %s", errs, cascade.ENOTFOUND)
	}
}

// TestRunTracesOneQueryPerPage: the traces of a page of runs are read in
// one store call, however many runs and whether by nodes or edges; each
// response reads its own.
func TestRunTracesOneQueryPerPage(t *testing.T) {
	store := newStore(7, 120)
	c := newClient(store)
	for _, q := range []string{
		`{ runs(first: 50) { nodes { id trace { id } } } }`,
		`{ runs(first: 50) { edges { node { id trace { id } } } } }`,
	} {
		var r struct {
			Runs struct {
				Nodes []struct {
					ID    string
					Trace struct{ ID string }
				}
				Edges []struct {
					Node struct {
						ID    string
						Trace struct{ ID string }
					}
				}
			}
		}
		for range 2 {
			if errs := post(t, c, q, &r); errs != nil {
				t.Fatal(errs)
			}
			if got := store.called(); got["TracesByID"] != 1 || got["Trace"] != 0 || got["Runs"] != 1 {
				t.Fatalf("%s: store calls %v, want one Runs and one TracesByID", q, got)
			}
		}
		nodes := r.Runs.Nodes
		for _, e := range r.Runs.Edges {
			nodes = append(nodes, e.Node)
		}
		if len(nodes) != 50 {
			t.Fatalf("%s: %d runs", q, len(nodes))
		}
		for _, n := range nodes {
			var i int
			fmt.Sscanf(n.ID, "r%d", &i)
			if want := fmt.Sprintf("t%d", i%7+1); n.Trace.ID != want {
				t.Errorf("%s: run %s has trace %q, want %s", q, n.ID, n.Trace.ID, want)
			}
		}
	}

	// A page of runs for each trace on a page of traces: at most a call a
	// page.
	var r struct {
		Traces struct {
			Nodes []struct {
				Runs struct {
					Nodes []struct{ Trace struct{ ID string } }
				}
			}
		}
	}
	if errs := post(t, c, `{ traces(first: 7) { nodes { runs(first: 50) { nodes { trace { id } } } } } }`, &r); errs != nil {
		t.Fatal(errs)
	}
	if got := store.called(); got["TracesByID"] < 1 || got["TracesByID"] > 7 || got["Trace"] != 0 {
		t.Fatalf("pages of runs of 7 traces: store calls %v, want 1 to 7 TracesByID", got)
	}

	// A run whose trace is gone: that run's trace is NOT_FOUND, the others'
	// are there.
	store.runs = append(store.runs, cascade.Run{ID: "r999", Seq: 999, TraceID: "gone", State: cascade.RunFailed})
	var page struct {
		Runs struct {
			Nodes []*struct{ ID string }
		}
	}
	errs := post(t, c, `{ runs(first: 3) { nodes { id trace { id } } } }`, &page)
	if len(errs) != 1 || errs[0].Extensions.Code != cascade.ENOTFOUND {
		t.Fatalf("a run of a missing trace: %+v, want one %s", errs, cascade.ENOTFOUND)
	}
	if got := store.called(); got["TracesByID"] != 1 {
		t.Fatalf("store calls %v, want one TracesByID", got)
	}
}

// TestKernelCountersOneReadPerPage: a page of kernels with their hardware
// counters reads the counters in a read or two (a window of consecutive
// kernels each), not one a kernel, and each kernel gets its own.
func TestKernelCountersOneReadPerPage(t *testing.T) {
	store := newStore(1, 0)
	for i := range 1200 {
		store.kernels = append(store.kernels, cascade.Kernel{TraceID: "t1", Seq: i, KernelID: i + 1, Name: "k"})
		store.counters = append(store.counters, cascade.KernelCounter{TraceID: "t1", Seq: i, Stat: "cycles", Mean: float64(i), Min: float64(i), Max: float64(i), Count: 1})
	}
	c := newClient(store)
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
	if errs := post(t, c, `{ trace(id: "t1") { kernels(first: 100) { nodes { kernelId counters { statistic mean } } } } }`, &r); errs != nil {
		t.Fatal(errs)
	}
	if got := store.called(); got["KernelCounters"] < 1 || got["KernelCounters"] > 2 {
		t.Errorf("store calls %v, want one or two KernelCounters for a page of 100", got)
	}
	if len(r.Trace.Kernels.Nodes) != 100 {
		t.Fatalf("%d kernels", len(r.Trace.Kernels.Nodes))
	}
	for _, k := range r.Trace.Kernels.Nodes {
		if len(k.Counters) != 1 || k.Counters[0].Mean != float64(k.KernelID-1) {
			t.Fatalf("kernel %d: counters %+v", k.KernelID, k.Counters)
		}
	}
}
