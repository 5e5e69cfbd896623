// Package scanner follows every trace in the bucket from its first file to
// a complete upload.
//
// A [Scanner] walks $CASCADE_DATA_DIR/s3/<bucket>/<prefix>/ every
// Interval (2 s) and also reacts at once to fsnotify events, so a change
// normally reaches subscribers within milliseconds; the periodic scan is
// the safety net for missed events, watch limits and queue overflows.
//
// Its cost follows what changed. An uploading trace is walked in full on
// every scan; a processing, ready or failed trace costs one stat per
// directory (its DirSignature) unless fsnotify reported a change in it.
// A pass with many traces to walk (the first start on a full bucket)
// walks a few at once and commits a hundred a transaction; each batch's
// changes are published in order once it is committed.
//
// The scanner alone writes a trace's scan fields (bytes, kernel count while
// uploading, metadata fields, timing flags, its ScanWarnings: metadata.json
// values of an unexpected shape, and the note that data files changed). It decides no state: what a
// walk saw of the upload (complete, broken, failed by its metadata.json,
// or a finished trace's files changed) is an event of package tracestate,
// and [tracestate.Next] says, inside the committing transaction, where it
// moves the trace: uploading to processing or failed, processing to
// failed when metadata.json says "failed", a ready or failed trace back
// to uploading when it was uploaded again (metadata.json gone or changed,
// a data file of the upload changed or gone, or a ready trace without
// traces/kernelslist.g), its kernels dropped in the same transaction; a
// ready trace whose hardware profiles alone changed (profiles.go) stays
// ready and is reported as [tracestate.ProfilesChanged], which has the
// post-processor read them again. Every change is committed first and published
// after, as a copy of the committed row, and then reported to
// Config.States, the [tracestate.Machine], which starts or stops the
// post-processor; the Machine's outcomes of post-processing tell the
// scanner which traces to walk again (see settle in retry.go).
//
// A walk's verdict is reached in inspect.go: see reads what a walk saw
// (its tree and metadata.json), inspect applies the Traces guide's rules
// to that, the trace's earlier walks and the clock, reading nothing else,
// and look.apply writes the outcome into the stored trace inside the
// committing transaction. inspect_test.go tables every rule.
//
// A directory with no file but dotfiles is no trace. A trace uploaded
// under the seeded sample's id takes it, and the sample moves aside (see
// sample.go).
package scanner
