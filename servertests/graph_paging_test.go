package servertests_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/samples"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// sqlRecorder is a slog handler that keeps the SQL the database runs
// (db.LevelSQL records) and drops the rest.
type sqlRecorder struct {
	mu  sync.Mutex
	sql []string
}

func (r *sqlRecorder) Enabled(_ context.Context, l slog.Level) bool { return l == db.LevelSQL }
func (r *sqlRecorder) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *sqlRecorder) WithGroup(string) slog.Handler                { return r }

func (r *sqlRecorder) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "sql" {
			r.mu.Lock()
			r.sql = append(r.sql, a.Value.String())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

// during returns the statements run while fn ran that mention table and
// contain substr (case-insensitive). The server's background work (scans)
// runs beside fn, hence the filters.
func (r *sqlRecorder) during(fn func(), table, substr string) []string {
	r.mu.Lock()
	start := len(r.sql)
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.sql[start:] {
		l := strings.ToLower(s)
		if strings.Contains(l, table) && strings.Contains(l, strings.ToLower(substr)) {
			out = append(out, s)
		}
	}
	return out
}

// TestTotalCountOnlyWhenSelected counts the SQL behind connection fields: a
// page without totalCount runs no COUNT, and a trace's kernel count is one
// index probe, never a COUNT over its kernels.
func TestTotalCountOnlyWhenSelected(t *testing.T) {
	rec := &sqlRecorder{}
	servertest.ForEachServer(t, func(t *testing.T, s *servertest.TestServer) {
		vars := map[string]any{"id": samples.SampleID}
		var all struct {
			Trace struct {
				KernelCount int
				Kernels     struct {
					Nodes []struct{ KernelID int }
				}
			}
		}
		kernelsRead := rec.during(func() {
			s.MustDo(t, `query($id: ID!) { trace(id: $id) { kernelCount kernels(first: 5000) { nodes { kernelId } } } }`, vars, &all)
		}, "kernels", "select")
		if len(kernelsRead) == 0 {
			t.Fatal("no SQL on kernels recorded: the recorder sees nothing, so it proves nothing")
		}
		if n := len(all.Trace.Kernels.Nodes); n == 0 {
			t.Fatal("the sample trace has no kernels")
		}
		for _, q := range kernelsRead {
			if strings.Contains(strings.ToLower(q), "count(") {
				t.Errorf("totalCount not selected, but the page ran %s", q)
			}
		}

		for _, query := range []string{
			`query($id: ID!) { trace(id: $id) { kernels(first: 2) { totalCount } } }`,
			`query($id: ID!) { trace(id: $id) { kernels(first: 2) { ... on KernelConnection { totalCount } } } }`,
			`query($id: ID!) { trace(id: $id) { kernels(first: 2) { ...total } } } fragment total on KernelConnection { totalCount }`,
		} {
			var got struct {
				Trace struct{ Kernels struct{ TotalCount int } }
			}
			counts := rec.during(func() { s.MustDo(t, query, vars, &got) }, "kernels", "count(")
			if len(counts) > 0 {
				t.Errorf("kernel totalCount ran %q; want the stored count", counts)
			}
			if got.Trace.Kernels.TotalCount != len(all.Trace.Kernels.Nodes) {
				t.Errorf("%s: totalCount %d, want %d (the kernels paged)", query, got.Trace.Kernels.TotalCount, len(all.Trace.Kernels.Nodes))
			}
		}

		var traces struct{ Traces struct{ TotalCount int } }
		if counts := rec.during(func() { s.MustDo(t, `{ traces(first: 1) { nodes { id } } }`, nil, nil) }, "traces", "count("); len(counts) > 0 {
			t.Errorf("traces without totalCount ran %q", counts)
		}
		if counts := rec.during(func() { s.MustDo(t, `{ traces(first: 1) { totalCount } }`, nil, &traces) }, "traces", "count("); len(counts) != 1 {
			t.Errorf("traces with totalCount ran %d counts (%q), want 1", len(counts), counts)
		}
		if traces.Traces.TotalCount != 1 {
			t.Errorf("traces totalCount %d, want 1 (the sample)", traces.Traces.TotalCount)
		}
		if counts := rec.during(func() { s.MustDo(t, `{ runs { nodes { id } } }`, nil, nil) }, "runs", "count("); len(counts) > 0 {
			t.Errorf("runs without totalCount ran %q", counts)
		}
	}, func(c *app.Config) { c.Logger = slog.New(rec) })
}
