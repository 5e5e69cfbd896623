package scanner

import (
	"testing"
	"time"

	"github.com/cascade-sim/cascade/tracedir"
)

// TestArrivingCounts: an uploading trace's bytes add what has arrived of
// the files still being uploaded, and its kernel count the raw kernel
// traces among them in traces/; a file already on disk (one being
// replaced, or just completed) counts once, at its size on disk, and a
// dotfile not at all, as on disk.
func TestArrivingCounts(t *testing.T) {
	tree := &tracedir.Tree{Root: "/nonexistent/t", Dirs: map[string]time.Time{}, Files: map[string]tracedir.File{
		tracedir.MetadataFile:   {Path: tracedir.MetadataFile, Size: 100},
		"traces/kernel-1.trace": {Path: "traces/kernel-1.trace", Size: 1000},
	}}
	saw := sight{tree: tree, meta: []byte(`{"model": "m"}`), writing: true, arriving: map[string]int64{
		"traces/kernel-1.trace":      700, // replaced: on disk already
		"traces/kernel-2.trace":      5000,
		"traces/kernel-3.trace.xz":   300,
		"traces/.kernel-4.trace":     90, // a dotfile
		"kernel-5.trace":             40, // not in traces/: bytes, no kernel
		"traces/stats_ctx_0x1":       20,
		".rclone_temp_put_something": 8,
	}}
	l, _ := inspect(saw, history{}, time.Now(), testInterval)
	if want := int64(100 + 1000 + 5000 + 300 + 40 + 20); l.bytes != want {
		t.Errorf("bytes %d, want %d", l.bytes, want)
	}
	if l.rawKernels != 3 {
		t.Errorf("kernels %d, want 3 (one on disk, two arriving)", l.rawKernels)
	}
	saw.arriving = nil
	if l, _ := inspect(saw, history{}, time.Now(), testInterval); l.bytes != 1100 || l.rawKernels != 1 {
		t.Errorf("nothing arriving: %d bytes, %d kernels, want 1100 and 1", l.bytes, l.rawKernels)
	}
}
