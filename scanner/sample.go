package scanner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/samples"
)

// A trace uploaded under the seeded sample's id takes that id: the id is
// the profiler's --run-name, which the user's scripts ask for, and the
// sample is a copy from the binary. The sample is not dropped: it moves to
// samples.MovedID, a dotfile name no bucket directory can take, with a
// warning saying why, and takes its id back when the upload goes.

// sampleAside moves the seeded sample out of the way of the upload in the
// bucket directory id. It reports whether the id is free now.
func (s *Scanner) sampleAside(ctx context.Context, id string) bool {
	t, err := s.cfg.Store.MoveTrace(ctx, id, samples.MovedID, func(t *cascade.Trace) error {
		if !t.Sample {
			return fmt.Errorf("trace %q is no longer the sample", id)
		}
		t.Warnings = append([]string{samples.MovedWarning}, t.Warnings...)
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("move the seeded sample aside", "trace", id, "sample", samples.MovedID, "err", err)
		}
		return false
	}
	s.log.Warn("an uploaded trace takes the sample's id; the seeded sample moves", "trace", id, "sample", samples.MovedID)
	s.cfg.Events.Publish(cascade.TraceUpdated{Trace: t})
	return true
}

// sampleBack gives the seeded sample its id back once the upload that took
// it is gone.
func (s *Scanner) sampleBack(ctx context.Context) {
	errNotSample := errors.New("not the sample")
	t, err := s.cfg.Store.MoveTrace(ctx, samples.MovedID, samples.SampleID, func(t *cascade.Trace) error {
		if !t.Sample {
			return errNotSample
		}
		t.Warnings = slices.DeleteFunc(t.Warnings, func(w string) bool { return w == samples.MovedWarning })
		return nil
	})
	switch {
	case cascade.ErrorCode(err) == cascade.ENOTFOUND || errors.Is(err, errNotSample):
		return
	case err != nil:
		if ctx.Err() == nil {
			s.log.Error("move the seeded sample back", "trace", samples.SampleID, "err", err)
		}
		return
	}
	s.log.Info("the seeded sample takes its id back", "trace", samples.SampleID)
	s.cfg.Events.Publish(cascade.TraceRemoved{ID: samples.MovedID})
	s.cfg.Events.Publish(cascade.TraceUpdated{Trace: t})
}
