package scanner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/samples"
)

// Remove deletes a trace's directory from the bucket, as `aws s3 rm
// --recursive` would, and has the scanner see it gone at once: the
// trace, its runs and its post-processing go the way of any trace removed
// from the bucket (Config.Removing and Removed, then traceRemoved). The directory is
// first renamed to a dot-name, which the scanner and the S3 listing skip,
// so no half-deleted trace is ever seen. It returns once the directory is
// gone, before the scanner has seen it (traceRemoved says when); NOT_FOUND
// for an unknown trace, CONFLICT for the sample trace, which ships with
// Cascade.
func (s *Scanner) Remove(ctx context.Context, id string) error {
	errRead := errors.New("read only")
	_, _, err := s.cfg.Store.UpdateTrace(ctx, id, func(t *cascade.Trace, found bool) error {
		switch {
		case !found:
			return cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", id)
		case t.Sample:
			return cascade.Errorf(cascade.ECONFLICT, "trace %q is the sample trace, which ships with Cascade; it cannot be removed", id)
		}
		return errRead
	})
	if !errors.Is(err, errRead) {
		return err
	}
	dir := s.dir(id)
	// The id is cut to 200 bytes so the name fits a file name's 255
	// whatever the id's length (up to cascade.MaxTraceIDLen).
	gone := filepath.Join(s.cfg.Root, fmt.Sprintf(".removing-%s-%d", id[:min(len(id), 200)], time.Now().UnixNano()))
	switch err := os.Rename(dir, gone); {
	case errors.Is(err, os.ErrNotExist):
		// Already gone from the bucket: the scanner has yet to see it.
	case err != nil:
		return fmt.Errorf("remove trace %q: %w", id, err)
	default:
		s.log.Info("trace removed by request", "trace", id)
		if err := os.RemoveAll(gone); err != nil {
			s.log.Error("remove trace's files", "trace", id, "path", gone, "err", err)
		}
	}
	s.Kick(id)
	return nil
}

// remove takes a trace whose directory left the bucket out of the
// store: what works on its files stops first (Config.Removing), what
// depends on it goes after (Config.Removed), and traceRemoved is
// published.
func (s *Scanner) remove(ctx context.Context, id string) {
	if s.cfg.Removing != nil {
		if err := s.cfg.Removing(ctx, id); err != nil {
			if ctx.Err() == nil {
				s.log.Error("stop what works on trace; trying again on the next scan", "trace", id, "err", err)
			}
			return
		}
	}
	if err := s.cfg.Store.DeleteTrace(ctx, id); err != nil {
		s.log.Error("remove trace", "trace", id, "err", err)
		return
	}
	if s.cfg.Removed != nil {
		if err := s.cfg.Removed(ctx, id); err != nil {
			if ctx.Err() == nil {
				s.log.Error("remove what depends on trace; trying again on the next scan", "trace", id, "err", err)
			}
			return
		}
	}
	delete(s.traces, id)
	s.log.Info("trace removed from bucket", "trace", id)
	s.cfg.Events.Publish(cascade.TraceRemoved{ID: id})
	if id == samples.SampleID {
		s.sampleBack(ctx)
	}
}
