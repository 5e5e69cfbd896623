package scanner

import (
	"context"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracestate"
)

// Retry sends a failed or ready trace back through the completeness rules
// and, once complete, post-processing: for a user who fixed its files, or
// whose simulator needs the other trace format (the post-processor redoes
// a ready trace whose processed files are not in its format). It returns
// NOT_FOUND for an unknown trace and CONFLICT for one still uploading or
// processing, for the sample trace, and for a trace its own
// metadata.json failed (see [cascade.Trace.Retryable]).
func (s *Scanner) Retry(ctx context.Context, id string) (cascade.Trace, error) {
	t, _, err := s.cfg.Store.UpdateTrace(ctx, id, func(t *cascade.Trace, found bool) error {
		switch {
		case !found:
			return cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", id)
		case t.Sample:
			return cascade.Errorf(cascade.ECONFLICT, "trace %q is the sample trace; it cannot be retried", id)
		case !t.State.Finished():
			return cascade.Errorf(cascade.ECONFLICT, "trace %q %s; only a failed or ready trace can be retried", id, t.State.Is())
		case !t.Retryable():
			return cascade.Errorf(cascade.ECONFLICT, "trace %q failed on its metadata.json (%s): a retry would read the same file again; upload a corrected metadata.json and the trace starts over by itself", id, cascade.Deref(t.Error))
		}
		to, ok := tracestate.Next(t.State, tracestate.Retried)
		if !ok { // Finished, checked above: the table and the check agree
			return cascade.Errorf(cascade.ECONFLICT, "trace %q %s; it cannot be retried", id, t.State.Is())
		}
		t.State, t.Error = to, nil
		return nil
	})
	if err != nil {
		return t, err
	}
	s.log.Info("trace retried", "trace", id)
	s.report(tracestate.Move{ID: id, To: t.State, By: tracestate.Retried})
	s.cfg.Events.Publish(cascade.TraceUpdated{Trace: t})
	s.Refresh(id)
	return t, nil
}

// Refresh asks for an immediate walk of the trace whatever state the
// scanner last saw: after a retry, and (through settle) after the
// post-processor ran for a trace, so the scanner's view (and the trace's
// bytes, grown by processed files) catches up at once.
func (s *Scanner) Refresh(id string) {
	s.mu.Lock()
	s.forced[id] = true
	s.mu.Unlock()
	s.wake()
}

// settle takes the post-processor's moves from Config.States and adds to
// forced the traces to walk again. A trace a post-processor ran for is
// walked again (as after [Scanner.Refresh]). Otherwise the trace's files
// are the ones the walk that sent it to processing saw, unless they
// changed since: the scanner walks it again only when its directories or
// metadata.json differ from that walk's, or when it let a file-system
// event for the trace go by while the trace was processing (or has no
// file-system events to go by, or not for every directory). Else it only
// takes the new state, and a bucket of finished uploads is not walked
// twice at start.
func (s *Scanner) settle(forced map[string]bool) {
	if s.cfg.States == nil {
		return
	}
	for id, o := range s.cfg.States.TakeOutcomes() {
		e := s.traces[id]
		if e != nil {
			// The walk that follows begins after the move: its look is
			// judged against the state it knows (see stale).
			e.state = o.State
		}
		if !o.Ran && !forced[id] && e != nil && s.unchanged(id, e) {
			continue
		}
		forced[id] = true
	}
}

// report tells Config.States of a committed move.
func (s *Scanner) report(mv tracestate.Move) {
	if s.cfg.States != nil {
		s.cfg.States.Moved(mv)
	}
}
