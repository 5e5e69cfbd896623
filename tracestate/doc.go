// Package tracestate is where a trace's state is decided: the one table
// of which event moves a trace from which state to which ([Next]), and
// the [Machine] that the two packages that observe a trace report to.
//
// A trace moves UPLOADING → PROCESSING → READY or FAILED (the Traces
// guide). Two packages see what happens to it, and neither decides a
// state on its own:
//
//   - package scanner walks the bucket and reports what a walk saw of a
//     trace: its upload complete ([UploadComplete]), its metadata.json
//     broken or its files list bad ([UploadBroken]), its metadata.json
//     saying "failed" ([MetadataFailed]), or the files of a finished
//     trace changed ([FilesChanged]), or only the hardware profiles of
//     a ready one ([ProfilesChanged], which moves no state); and a
//     user's retry ([Retried]).
//   - package postproc runs the post-processor and reports its outcome:
//     [Processed] or [ProcessFailed].
//
// Each asks [Next] inside the transaction that commits the trace, so a
// state is only ever written as the table says, and after the commit
// tells the [Machine] of the move ([Machine.Moved]). The Machine then
// does what the move calls for: a trace that reached PROCESSING is handed
// to the post-processor, one the scanner failed, or started over for
// changed files, has its post-processor stopped, a retried one is announced to it, a ready one whose profiles
// changed has them read again (and stays READY); and a move the
// post-processor made is kept for the scanner ([Machine.Outcomes]), which
// walks the trace again when the post-processor may have changed its
// files.
//
// The loop is in the types: the Machine holds the post-processor as a
// [Processor]; the post-processor reports to the Machine it is given when
// it starts (postproc.Processor.Run takes a postproc.Reporter); the
// scanner holds the Machine (scanner.Config.States). app builds them in
// that order.
//
// The package imports only the root package.
package tracestate
