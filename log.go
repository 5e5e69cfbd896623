package cascade

// LogTail reads a log the server keeps (a run's simulator output, a
// trace's post-processing output) as it grows: each Next returns the
// complete lines written since the last. A log that does not exist yet
// reads as no lines. It is meant for one goroutine.
type LogTail interface {
	Next() ([]string, error)
}
