package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
)

// TestResumeRecopiesAChangedFile interrupts a local upload after its data
// files arrived, changes one byte of one of them in the source (same size,
// another modification time, as tracing again leaves it), and resumes: the
// changed file is copied again, the unchanged one is kept, and the
// destination holds the new bytes with the source's time.
func TestResumeRecopiesAChangedFile(t *testing.T) {
	src, prefix := t.TempDir(), t.TempDir()
	testkit.WriteTree(t, src, map[string]string{
		"metadata.json":    `{"run_name": "retraced"}`,
		"traces/kernel-1":  strings.Repeat("kernel one\n", 1000),
		"traces/unchanged": "stays as it is",
	})
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{Source: src, PrefixDir: prefix, renamed: func(rel string) {
		if rel == "traces/unchanged" {
			cancel() // both data files are there, metadata.json is not
		}
	}}
	if _, err := Upload(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted upload: %v, want context.Canceled", err)
	}
	dest := filepath.Join(prefix, "retraced")
	if _, err := os.Stat(filepath.Join(dest, "metadata.json")); err == nil {
		t.Fatal("metadata.json written by the interrupted upload")
	}

	kernel := filepath.Join(src, "traces", "kernel-1")
	data, err := os.ReadFile(kernel)
	if err != nil {
		t.Fatal(err)
	}
	data[5] ^= 0xff
	if err := os.WriteFile(kernel, data, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour).Truncate(time.Second).Add(123456789)
	if err := os.Chtimes(kernel, later, later); err != nil {
		t.Fatal(err)
	}

	var progress bytes.Buffer
	opts.renamed, opts.Progress = nil, &progress
	res, err := Upload(context.Background(), opts)
	if err != nil {
		t.Fatalf("resumed upload: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dest, "traces", "kernel-1"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("kernel-1 after the resume: %v; holds the changed source: %v", err, bytes.Equal(got, data))
	}
	if res.Copied != 1 || res.Skipped != 1 {
		t.Errorf("resume copied %d and skipped %d files; want 1 (the changed one) and 1 (the unchanged one)", res.Copied, res.Skipped)
	}
	if !strings.Contains(progress.String(), "(1 already there, 1 changed since: sent again)") {
		t.Errorf("progress line: %q", progress.String())
	}
	if fi, err := os.Stat(filepath.Join(dest, "traces", "kernel-1")); err != nil || !fi.ModTime().Equal(later) {
		t.Errorf("kernel-1's time at the destination: %v, %v; want the source's %v", fi.ModTime(), err, later)
	}
	if files, _ := readMetadata(t, dest); len(files) != 2 {
		t.Errorf("files list = %v", files)
	}
}

// TestMtimeFormat: the mtime metadata is rclone's, seconds since the epoch
// in fixed point, and reads back to the nanosecond.
func TestMtimeFormat(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Unix(1733570000, 123456789), "1733570000.123456789"},
		{time.Unix(1733570000, 500000000), "1733570000.5"},
		{time.Unix(1733570000, 1), "1733570000.000000001"},
		{time.Unix(1733570000, 0), "1733570000"},
		{time.Unix(0, 0), "0"},
		{time.Unix(-2, 250000000), "-1.75"},
	} {
		s := formatMtime(tc.t)
		if s != tc.want {
			t.Errorf("formatMtime(%v) = %q, want %q", tc.t, s, tc.want)
		}
		if back, err := parseMtime(s); err != nil || !back.Equal(tc.t) {
			t.Errorf("parseMtime(%q) = %v, %v; want %v", s, back, err, tc.t)
		}
	}
	for _, bad := range []string{"", ".5", "x", "1.2.3", "1.-5", "--1", "1e9", "99999999999999999999"} {
		if _, err := parseMtime(bad); err == nil {
			t.Errorf("parseMtime(%q) succeeded", bad)
		}
	}
	if !sameMtime(map[string]string{"Mtime": "1733570000.5"}, time.Unix(1733570000, 5e8)) ||
		sameMtime(map[string]string{"mtime": "1733570000.5"}, time.Unix(1733570000, 5e8+1)) ||
		sameMtime(nil, time.Unix(1733570000, 0)) {
		t.Error("sameMtime")
	}
}
