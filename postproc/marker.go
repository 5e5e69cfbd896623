package postproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cascade-sim/cascade/tracedir"
)

// A marker, work/postprocess/<trace id>.running, says a traces/kernelslist.g
// is a post-processor's output (partial, or of an earlier upload of the
// trace) rather than part of the upload, so the skip rule must not take
// it. It holds one line: the identity of the trace directory the
// post-processor ran in, then either "-" while it runs or, once it ended
// (failed, was interrupted or stopped, or succeeded), the identity of the
// kernelslist.g it left behind (with none, the marker goes). A marker of
// another directory (the trace was deleted and uploaded again) or of
// another kernelslist.g (an upload brought its own) is stale and ignored;
// the trace's removal deletes it.

const (
	markRunning = "-"
	markerExt   = ".running"
)

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

// leftMarker records how a post-processor that ended left the trace: a
// kernelslist.g it left is its output (partial, unless it succeeded), not
// an upload's, and with none nothing needs distrusting.
func (p *Processor) leftMarker(id, dir, list string) {
	listID := statID(list)
	if listID == "" {
		p.removeMarker(id)
		return
	}
	if err := os.WriteFile(p.markerPath(id), []byte(statID(dir)+" "+listID+"\n"), 0o644); err != nil {
		p.log.Error("write marker", "trace", id, "err", err)
	}
}

// settleMarkers, on start, turns the markers of post-processors that a
// previous server left running into markers of what they left behind:
// whatever kernelslist.g is there now is their partial output, and only
// an upload changes it from here on.
func (p *Processor) settleMarkers() {
	paths, _ := filepath.Glob(filepath.Join(p.cfg.WorkDir, "postprocess", "*"+markerExt))
	for _, path := range paths {
		id := strings.TrimSuffix(filepath.Base(path), markerExt)
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		dir := filepath.Join(p.cfg.Root, id)
		switch f := strings.Fields(string(b)); {
		case len(f) == 0, len(f) == 2 && f[1] == markRunning && f[0] == statID(dir):
			p.log.Info("post-processing was interrupted; it runs again unless the upload brings its own kernelslist.g", "trace", id)
			p.leftMarker(id, dir, filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG)))
		case len(f) == 2 && f[1] == markRunning:
			p.removeMarker(id) // its directory is gone or was replaced
		}
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
	if len(f) != 2 || f[0] != statID(dir) {
		return false, ""
	}
	switch f[1] {
	case markRunning:
		return true, "another post-processor of this trace is running"
	case statID(list):
		return true, "this kernelslist.g is what a post-processor left, not the upload's"
	}
	return false, ""
}
