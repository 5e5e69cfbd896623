package s3gw

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/versity/versitygw/backend/posix"
)

// TestStoppedComparisonIsFinishedAtStart: a server stopped while it
// compared objects written again with the bytes they had left them with
// their new modification times and the kept links, with their notes. The
// next start compares them again: the same bytes get their earlier time
// back, other bytes keep the new one, the object counts as being written
// until then, and no link or note is left. A link without its note is
// removed. The same bytes were taken for new data, and the ready trace
// was post-processed again.
func TestStoppedComparisonIsFinishedAtStart(t *testing.T) {
	root := t.TempDir()
	bucket := "cascade"
	tmp := filepath.Join(root, bucket, posix.MetaTmpDir)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	earlier := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	later := earlier.Add(time.Hour)
	// kept writes the object key with data at the later time and a kept
	// link of old bytes (at the earlier time) with its note.
	kept := func(key, data, old, link string, note bool) string {
		t.Helper()
		obj := filepath.Join(root, bucket, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
			t.Fatal(err)
		}
		for p, b := range map[string]string{obj: data, filepath.Join(tmp, link): old} {
			if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(obj, later, later); err != nil {
			t.Fatal(err)
		}
		if note {
			p := &prior{bucket: bucket, key: key, link: filepath.Join(tmp, link), size: int64(len(old)), mtime: earlier}
			if err := writeNote(p); err != nil {
				t.Fatal(err)
			}
		}
		return obj
	}
	same := kept("traces/t1/traces/kernel-1.trace", "the same bytes", "the same bytes", priorPrefix+"01", true)
	other := kept("traces/t2/traces/kernel-1.trace", "other bytes!!!", "the same bytes", priorPrefix+"02", true)
	unnoted := kept("traces/t3/traces/kernel-1.trace", "the same bytes", "the same bytes", priorPrefix+"03", false)

	g := startTest(t, root)
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, _ := filepath.Glob(filepath.Join(tmp, priorPrefix+"*"))
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after 10 s: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.same.wait() // the comparisons have dropped their links: wait for them to end
	for obj, want := range map[string]time.Time{same: earlier, other: later, unnoted: later} {
		fi, err := os.Stat(obj)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(want) {
			t.Errorf("%s: modified %v, want %v", obj, fi.ModTime().UTC(), want)
		}
	}
	if g.Writing(bucket, "traces/", time.Now()) {
		t.Error("an object still counts as being written")
	}
}
