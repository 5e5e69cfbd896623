package postproc

import (
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade/tracedir"
)

// forUser rewrites a failure message of trace id for the person who
// uploaded it: the server's paths of the trace's files become the names
// they uploaded them as (s3://cascade/traces/<id>/traces/kernelslist),
// and a kernel trace the list names but the upload lacks says what to do.
func (p *Processor) forUser(id, msg string) string {
	if msg == "" {
		return msg
	}
	dir := filepath.Join(p.cfg.Root, id)
	if p.cfg.Objects != "" {
		msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), p.cfg.Objects+"/"+id+"/")
		msg = strings.ReplaceAll(msg, dir, p.cfg.Objects+"/"+id)
	}
	if strings.Contains(msg, ": no such file") && strings.Contains(msg, "kernel trace ") {
		msg += "; upload the missing kernel trace into the trace's traces/ folder, then Retry (retryTrace)"
	}
	return noTracesHint(msg)
}

// noTracesHint adds what to do to the failure of a trace that has no
// traces/ folder: it was uploaded from the wrong folder (the traces/
// folder itself, or a folder of traces).
func noTracesHint(msg string) string {
	if strings.Contains(msg, "/"+tracedir.TracesDir+": no such file") {
		msg += "; the upload has no traces/ folder, so it was made from the wrong folder: upload the folder the tracer wrote, the one that holds traces/ and metadata.json, and delete this trace (Delete on its page, or removeTrace)"
	}
	return msg
}
