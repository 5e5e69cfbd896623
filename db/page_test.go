package db_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// lastSQL is a slog handler that keeps the last SQL statement matching a
// prefix that the database ran.
type lastSQL struct {
	mu     sync.Mutex
	prefix string
	sql    string
}

func (h *lastSQL) Enabled(_ context.Context, l slog.Level) bool { return l == db.LevelSQL }
func (h *lastSQL) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *lastSQL) WithGroup(string) slog.Handler                { return h }

func (h *lastSQL) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "sql" && strings.HasPrefix(a.Value.String(), h.prefix) {
			h.mu.Lock()
			h.sql = a.Value.String()
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

func (h *lastSQL) take() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sql
	h.sql = ""
	return s
}

// TestDeepPagesAreIndexRangeScans checks the plans of deep keyset pages:
// an index range scan starting at the cursor, no sort and no scan of the
// rows before it, on SQLite and PostgreSQL.
func TestDeepPagesAreIndexRangeScans(t *testing.T) {
	ctx := context.Background()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			h := &lastSQL{prefix: "SELECT * FROM"}
			d, err := db.Open(ctx, db.Config{URL: u, DataDir: t.TempDir(), Logger: slog.New(h)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			const n = 10000
			for _, tr := range []struct {
				id string
				n  int
			}{{"small", 10}, {"big", n}} {
				if err := d.SaveTrace(ctx, newTrace(tr.id)); err != nil {
					t.Fatal(err)
				}
				ks := make([]cascade.Kernel, tr.n)
				for i := range ks {
					ks[i] = cascade.Kernel{KernelID: i + 1, Name: "k", TraceFile: "kernel-1.trace"}
				}
				if err := d.ReplaceKernels(ctx, tr.id, ks); err != nil {
					t.Fatal(err)
				}
			}
			p, err := d.Kernels(ctx, "big", "", cascade.Page{First: 100, After: cascade.Cursor(n - 1000), Count: true})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != n || len(p.Items) != 100 || p.Items[0].Seq != n-999 || !p.HasNext {
				t.Fatalf("page: total %d, %d items from seq %d, hasNext %v", p.Total, len(p.Items), p.Items[0].Seq, p.HasNext)
			}
			kernels := h.take()
			if _, err := d.Traces(ctx, cascade.TraceFilter{}, cascade.Page{First: 1, After: cascade.Cursor(2)}); err != nil {
				t.Fatal(err)
			}
			traces := h.take()
			pages := []struct{ sql, index string }{{kernels, "kernels"}}
			if d.Dialect() == "sqlite" {
				// PostgreSQL rightly scans a table of two traces whole.
				pages = append(pages, struct{ sql, index string }{traces, "traces"})
			}
			for _, q := range pages {
				if q.sql == "" {
					t.Fatal("the page's SQL was not logged")
				}
				plan, err := d.Explain(ctx, q.sql)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s\n%s", q.sql, plan)
				var ok bool
				if d.Dialect() == "sqlite" {
					// "SEARCH kernels USING PRIMARY KEY (trace_id=? AND seq>?)"
					ok = strings.Contains(plan, "SEARCH "+q.index+" USING ") && strings.Contains(plan, "seq") &&
						!strings.Contains(plan, "TEMP B-TREE")
				} else {
					// "Index Scan using kernels_pkey on kernels ... Index Cond: ((trace_id = 'big') AND (seq > 18999))"
					ok = strings.Contains(plan, "Index Scan") && strings.Contains(plan, "Index Cond") &&
						strings.Contains(plan, "seq") && !strings.Contains(plan, "Sort")
				}
				if !ok {
					t.Errorf("%s\nis not an index range scan:\n%s", q.sql, plan)
				}
			}
		})
	}
}

// TestKernelCount checks the stored kernel count against the kernels as
// they are replaced: longer, shorter, streamed, and none.
func TestKernelCount(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		if err := d.SaveTrace(ctx, newTrace("t")); err != nil {
			t.Fatal(err)
		}
		check := func(want int) {
			t.Helper()
			p, err := d.Kernels(ctx, "t", "", cascade.Page{First: cascade.MaxPageSize, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != int64(want) || len(p.Items) != want {
				t.Fatalf("total %d and %d kernels, want %d", p.Total, len(p.Items), want)
			}
		}
		kernels := func(n int) []cascade.Kernel {
			ks := make([]cascade.Kernel, n)
			for i := range ks {
				ks[i] = cascade.Kernel{KernelID: i + 1, Name: "k", TraceFile: "kernel-1.trace"}
			}
			return ks
		}
		check(0)
		for _, n := range []int{7, 1200, 3, 0} {
			if err := d.ReplaceKernels(ctx, "t", kernels(n)); err != nil {
				t.Fatal(err)
			}
			check(n)
		}
		err := d.ReplaceKernelsFrom(ctx, "t", func(add func([]cascade.Kernel) error) error {
			for range 3 {
				if err := add(kernels(400)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		check(1200)
	})
}
