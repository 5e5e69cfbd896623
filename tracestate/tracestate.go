package tracestate

import "github.com/cascade-sim/cascade"

// An Event is something that happened to a trace, as the package that saw
// it reports it.
type Event string

// What the scanner sees of a trace, and what a user asks of it.
const (
	// UploadComplete: the Traces guide's completeness rules hold.
	UploadComplete Event = "upload complete"
	// UploadBroken: metadata.json does not parse (and has stopped
	// changing), or its files list leaves the trace directory.
	UploadBroken Event = "upload broken"
	// MetadataFailed: metadata.json has status "failed".
	MetadataFailed Event = "metadata failed"
	// FilesChanged: a finished trace was uploaded again. Its
	// metadata.json is gone or replaced, or, ready, a data file its
	// upload completed with changed or it lost traces/kernelslist.g; or
	// a data file of a processing trace changed, which its
	// post-processor is working from.
	FilesChanged Event = "files changed"
	// Retried: a user asked for the trace to go through the rules and
	// post-processing again (retryTrace).
	Retried Event = "retried"
	// ProfilesChanged: a ready trace's hardware profiles changed (a file
	// metadata.json names as a profile was added, changed or removed, or
	// metadata.json was replaced by one that differs in its profiles
	// alone). It moves no trace: a ready one stays READY while the
	// post-processor reads its profiles again (no post-processing).
	ProfilesChanged Event = "profiles changed"
)

// What the post-processor reports.
const (
	// Processed: traces/kernelslist.g is there and the kernels are in.
	Processed Event = "processed"
	// ProcessFailed: the post-processor failed, left no kernelslist.g,
	// or its output cannot be read.
	ProcessFailed Event = "process failed"
)

// transitions is the table: from a state, the state each event moves a
// trace to. An event not listed for a state leaves the trace where it is.
var transitions = map[cascade.TraceState]map[Event]cascade.TraceState{
	cascade.TraceUploading: {
		UploadComplete: cascade.TraceProcessing,
		UploadBroken:   cascade.TraceFailed,
		MetadataFailed: cascade.TraceFailed,
	},
	cascade.TraceProcessing: {
		// Only metadata.json's own word and the data files stop
		// post-processing: a broken metadata.json, or one whose files
		// list changed, waits for the post-processor's outcome; a data
		// file that changed (its bytes, not metadata.json's list)
		// starts the trace over at once, rather than after a READY of
		// the earlier files.
		MetadataFailed: cascade.TraceFailed,
		FilesChanged:   cascade.TraceUploading,
		Processed:      cascade.TraceReady,
		ProcessFailed:  cascade.TraceFailed,
	},
	// ProfilesChanged is listed for no state: it never moves a trace.
	cascade.TraceReady: {
		FilesChanged: cascade.TraceUploading,
		Retried:      cascade.TraceUploading,
	},
	cascade.TraceFailed: {
		FilesChanged: cascade.TraceUploading,
		Retried:      cascade.TraceUploading,
	},
}

// Next returns the state the event moves a trace in state from to, and
// false when it does not move it.
func Next(from cascade.TraceState, ev Event) (cascade.TraceState, bool) {
	to, ok := transitions[from][ev]
	return to, ok
}

// ByScanner reports whether the event is one the scanner (or a user,
// through it) reports, rather than the post-processor.
func (e Event) ByScanner() bool { return e != Processed && e != ProcessFailed }
