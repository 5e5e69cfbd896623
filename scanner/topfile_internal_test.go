package scanner

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileAtThePrefixIsNoTrace: a file directly under the prefix (not a
// directory) is no trace: written and written again, it is never stored,
// published or removed, and it is logged once.
func TestFileAtThePrefixIsNoTrace(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	var logs bytes.Buffer
	b.s.log = slog.New(slog.NewTextHandler(&logs, nil))
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(b.root, "top.txt"), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		b.s.Kick("top.txt") // as the watcher does on each write
		b.s.scan(ctx, false, false)
		b.s.scan(ctx, true, false)
	}
	b.expect("a file at the prefix written three times", `events [] processed [] stopped []`)
	if ids := b.m.IDs(); len(ids) != 0 {
		t.Errorf("stored %v", ids)
	}
	if n := strings.Count(logs.String(), "top.txt"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "removed") {
		t.Errorf("logged a removal:\n%s", logs.String())
	}
}
