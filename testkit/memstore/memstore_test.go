package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/testkit/memstore"
)

// The fake's agreement with the database is db's TestContract, kept there
// so that this test binary does not link the database.

// TestFail: a write that Fail fails changes nothing.
func TestFail(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	m.UpdateTrace(ctx, "a", func(tr *cascade.Trace, _ bool) error { tr.State = cascade.TraceUploading; return nil })
	down := errors.New("database is down")
	m.Fail = func(op, id string) error {
		if id == "a" {
			return down
		}
		return nil
	}
	if _, saved, err := m.UpdateTrace(ctx, "a", func(tr *cascade.Trace, _ bool) error { tr.State = cascade.TraceReady; return nil }); saved || !errors.Is(err, down) {
		t.Fatalf("UpdateTrace: saved %v, %v", saved, err)
	}
	if _, err := m.UpdateTraces(ctx, []cascade.TraceWrite{
		{ID: "b", Update: func(tr *cascade.Trace, _ bool) (bool, error) { return false, nil }},
		{ID: "a", Update: func(tr *cascade.Trace, _ bool) (bool, error) { tr.State = cascade.TraceReady; return false, nil }},
	}); !errors.Is(err, down) {
		t.Fatalf("UpdateTraces: %v", err)
	}
	if err := m.DeleteTrace(ctx, "a"); !errors.Is(err, down) {
		t.Fatalf("DeleteTrace: %v", err)
	}
	if got, err := m.Trace(ctx, "a"); err != nil || got.State != cascade.TraceUploading || m.Writes("a") != 1 {
		t.Fatalf("a: %+v, %v, %d writes; want it as first written", got, err, m.Writes("a"))
	}
	if fmt.Sprint(m.IDs()) != "[a]" {
		t.Fatalf("ids %v: b of the failed batch went in", m.IDs())
	}
}
