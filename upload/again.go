package upload

import (
	"path"

	"github.com/cascade-sim/cascade/tracedir"
)

// An upload forced (--force) onto the very upload already there, its
// data files unchanged, keeps them and what the post-processor made of
// them: it writes metadata.json alone, in one rename. The trace is then
// not processed again; a metadata.json that changed counts as the server
// counts it (another model or GPU starts the trace over, new profiles
// are read, the same one changes nothing). Forcing it used to delete the
// processed files and copy every data file again, and the trace was
// post-processed anew for nothing.

// uploadedAgain reports whether the destination holds the source's
// upload as it is: every source file at its size and modification time
// (there: size and time by slash path; a copy gets its source's time, and
// an object its mtime metadata), and beside them only what a
// post-processor writes (processedOnly).
func uploadedAgain(src *source, same func(f sourceFile) bool, extra []string) bool {
	for _, f := range src.files {
		if !same(f) {
			return false
		}
	}
	return processedOnly(extra)
}

// processedOnly reports whether every file of extra (slash paths beside
// the source's) is a post-processor's output: in traces/, and not a file
// an upload holds (tracedir.IsUploadFile: a kernel trace, a list or
// statistics of the tracer's), which would be an earlier upload's.
func processedOnly(extra []string) bool {
	for _, rel := range extra {
		if path.Dir(rel) != tracedir.TracesDir || tracedir.IsUploadFile(rel) {
			return false
		}
	}
	return true
}
