package tracestate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracestate"
)

const (
	U = cascade.TraceUploading
	P = cascade.TraceProcessing
	R = cascade.TraceReady
	F = cascade.TraceFailed
)

var events = []tracestate.Event{
	tracestate.UploadComplete, tracestate.UploadBroken, tracestate.MetadataFailed, tracestate.FilesChanged,
	tracestate.Retried, tracestate.ProfilesChanged, tracestate.Processed, tracestate.ProcessFailed,
}

// TestNext tables every state and event: the moves the Traces guide
// describes, and that nothing else moves a trace.
func TestNext(t *testing.T) {
	// from, event: to; a pair not listed does not move.
	moves := map[cascade.TraceState]map[tracestate.Event]cascade.TraceState{
		U: {tracestate.UploadComplete: P, tracestate.UploadBroken: F, tracestate.MetadataFailed: F},
		P: {tracestate.MetadataFailed: F, tracestate.Processed: R, tracestate.ProcessFailed: F, tracestate.FilesChanged: U},
		R: {tracestate.FilesChanged: U, tracestate.Retried: U},
		F: {tracestate.FilesChanged: U, tracestate.Retried: U},
	}
	for _, from := range []cascade.TraceState{U, P, R, F} {
		for _, ev := range events {
			want, wantOK := moves[from][ev]
			got, ok := tracestate.Next(from, ev)
			if got != want || ok != wantOK {
				t.Errorf("Next(%s, %q) = %s, %v; want %s, %v", from, ev, got, ok, want, wantOK)
			}
		}
	}
	if to, ok := tracestate.Next("", tracestate.UploadComplete); ok {
		t.Errorf("Next of no state moved to %s", to)
	}
}

type procLog []string

func (p *procLog) Process(id string) { *p = append(*p, "process "+id) }
func (p *procLog) Stop(id string)    { *p = append(*p, "stop "+id) }
func (p *procLog) Retried(id string) { *p = append(*p, "retried "+id) }
func (p *procLog) ReadProfiles(id string) {
	*p = append(*p, "read profiles "+id)
}

// TestMachine: the scanner's moves drive the post-processor; the
// post-processor's are kept for the scanner, one per trace, and it is
// told there are some.
func TestMachine(t *testing.T) {
	var p procLog
	m := tracestate.New(&p)
	for _, mv := range []tracestate.Move{
		{ID: "a", To: P, By: tracestate.UploadComplete},
		{ID: "b", To: F, By: tracestate.MetadataFailed},
		{ID: "c", To: F, By: tracestate.UploadBroken},
		{ID: "d", To: U, By: tracestate.Retried},
		{ID: "e", To: U, By: tracestate.FilesChanged},
		{ID: "f", To: R, By: tracestate.ProfilesChanged},
		{ID: "g", To: U, By: tracestate.ProfilesChanged}, // started over meanwhile: nothing to read
	} {
		m.Moved(mv)
	}
	if want := []string{"process a", "stop b", "stop c", "retried d", "stop e", "read profiles f"}; !slices.Equal(p, want) {
		t.Errorf("the post-processor was told %q, want %q", p, want)
	}
	select {
	case <-m.Outcomes():
		t.Fatal("outcomes signalled with none")
	default:
	}
	p = nil
	m.Moved(tracestate.Move{ID: "a", To: R, By: tracestate.Processed, Ran: true})
	m.Moved(tracestate.Move{ID: "x", To: F, By: tracestate.ProcessFailed})
	m.Moved(tracestate.Move{ID: "a", To: R, By: tracestate.Processed})
	if len(p) != 0 {
		t.Errorf("the post-processor's own moves told it %q", p)
	}
	select {
	case <-m.Outcomes():
	default:
		t.Fatal("outcomes not signalled")
	}
	got := fmt.Sprint(m.TakeOutcomes())
	if want := "map[a:{READY true} x:{FAILED false}]"; got != want {
		t.Errorf("outcomes %s, want %s", got, want)
	}
	if o := m.TakeOutcomes(); len(o) != 0 {
		t.Errorf("taken twice: %v", o)
	}
	// No post-processor: the scanner alone.
	tracestate.New(nil).Moved(tracestate.Move{ID: "a", To: P, By: tracestate.UploadComplete})
}
