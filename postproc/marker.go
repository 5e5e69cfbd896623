package postproc

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// A marker, work/postprocess/<trace id>.running, says a traces/kernelslist.g
// may be a post-processor's partial output rather than part of the upload,
// so the skip rule must not take it. It holds one line: the identity of
// the trace directory the post-processor ran in, then either "-" while it
// runs (a marker found so was interrupted: any kernelslist.g is suspect)
// or, after it failed, the identity of the kernelslist.g it left behind.
// A marker of another directory (the trace was deleted and uploaded
// again) or of another kernelslist.g (an upload brought its own) is stale
// and ignored; only a success or the trace's removal deletes it otherwise.

const markRunning = "-"

// fileID names a file or directory: device and inode, and for a regular
// file also size and modification time, so a file replaced by an upload
// (written anew, or renamed over it) has another identity.
func fileID(fi os.FileInfo) string {
	id := ""
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	if fi.Mode().IsRegular() {
		id += fmt.Sprintf(":%d:%d", fi.Size(), fi.ModTime().UnixNano())
	}
	return id
}

func statID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fileID(fi)
}

// writeMarker records that the post-processor runs in dir.
func (p *Processor) writeMarker(id, dir string) error {
	return os.WriteFile(p.markerPath(id), []byte(statID(dir)+" "+markRunning+"\n"), 0o644)
}

// failedMarker records how a post-processor that did not succeed left the
// trace: a kernelslist.g it left is partial output, and with none nothing
// needs distrusting.
func (p *Processor) failedMarker(id, dir, list string) {
	listID := statID(list)
	if listID == "" {
		p.removeMarker(id)
		return
	}
	if err := os.WriteFile(p.markerPath(id), []byte(statID(dir)+" "+listID+"\n"), 0o644); err != nil {
		p.log.Error("write marker", "trace", id, "err", err)
	}
}

func (p *Processor) removeMarker(id string) {
	if err := os.Remove(p.markerPath(id)); err != nil && !os.IsNotExist(err) {
		p.log.Error("remove marker", "trace", id, "err", err)
	}
}

// suspect reports whether the kernelslist.g at list (which exists) may be
// a post-processor's partial output, and why.
func (p *Processor) suspect(id, dir, list string) (bool, string) {
	b, err := os.ReadFile(p.markerPath(id))
	if err != nil {
		return false, ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 { // a marker of an older version, written at the start
		return true, "post-processing was interrupted"
	}
	if len(f) != 2 || f[0] != statID(dir) {
		return false, ""
	}
	switch f[1] {
	case markRunning:
		return true, "post-processing was interrupted"
	case statID(list):
		return true, "a failed post-processor left this kernelslist.g"
	}
	return false, ""
}
