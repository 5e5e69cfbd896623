package postproc

import (
	"path/filepath"
	"strings"
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
	return msg
}
