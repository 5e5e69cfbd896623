package postproc

import (
	"context"
	"time"

	"github.com/cascade-sim/cascade/tracedir"
)

// uploadSum fingerprints the trace's data files as they are now, as the
// scanner fingerprints them when its upload is complete
// (Trace.UploadSum), and names the file to blame when they differ; ok is
// false when the trace cannot be walked. Before a trace is made ready its
// files are checked again: a data file changed while it was
// post-processed, too late for the scanner's walks during it, would leave
// it ready on files the bucket no longer holds.
func uploadSum(dir string) (sum, which string, ok bool) {
	tree, err := tracedir.Walk(dir)
	if err != nil {
		return "", "", false
	}
	var meta *tracedir.Metadata
	if m, err := tracedir.ReadMetadata(dir); err == nil {
		meta = &m
	}
	sum, which = tracedir.UploadSum(tree, meta)
	return sum, which, true
}

// settledSum is uploadSum once the S3 endpoint's writes of the trace's
// files are over, when it differs from stored, the sum the upload was
// complete with. A file written again with the bytes it had is in place
// with a new modification time until its write ends (package s3gw gives
// it the earlier one back then): a walk in between must not leave the
// trace processing, as a change the scanner then never sees would. A
// write that changes the bytes ends too, and the sums differ then; the
// scanner stops the post-processing (ctx) once it sees that.
func (p *Processor) settledSum(ctx context.Context, id, dir, stored string) (sum, which string, ok bool) {
	for {
		start := time.Now()
		sum, which, ok = uploadSum(dir)
		if !ok || !changedSince(stored, sum) || p.cfg.Writing == nil || !p.cfg.Writing(id, start) {
			return sum, which, ok
		}
		select {
		case <-ctx.Done():
			return sum, which, ok
		case <-time.After(settlePoll):
		}
	}
}

// settlePoll is how often settledSum looks again.
const settlePoll = 50 * time.Millisecond

// changedSince reports whether now, a trace's uploadSum, differs from the
// one its upload was complete with (stored; "" for a trace stored
// before sums were kept, which is never held to it).
func changedSince(stored, now string) bool { return stored != "" && now != "" && now != stored }

// notReadyLog is what the processor logs of a trace it leaves processing
// for the scanner to start over.
const notReadyLog = "a data file changed while the trace was post-processed; not ready on the earlier files"
