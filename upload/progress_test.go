package upload

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
)

// TestProgressLines checks the plain lines written when stderr is not a
// terminal: one every interval, never a carriage return.
func TestProgressLines(t *testing.T) {
	src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
	testkit.WriteTree(t, src, map[string]string{"a": strings.Repeat("a", 4*copyBuffer), "b": strings.Repeat("b", 4*copyBuffer)})
	clock := time.Unix(1000, 0)
	now := func() time.Time {
		clock = clock.Add(3 * time.Second) // each 1 MiB write takes 3 s
		return clock
	}
	var out bytes.Buffer
	if _, err := Upload(context.Background(), Options{Source: src, Dest: dest, Progress: &out, now: now}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "upload: "+src+" -> "+dest+": copying 2 files (8.0 MiB)") {
		t.Errorf("first line = %q", lines[0])
	}
	// 8 writes 3 s apart with a line at most every 10 s: at 12 s and 24 s.
	re := regexp.MustCompile(`^upload: \d+\.\d MiB of 8\.0 MiB \(\d+%\), \d+\.\d KiB/s, \d+s left$`)
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), out.String())
	}
	for _, l := range lines[1:] {
		if !re.MatchString(l) {
			t.Errorf("progress line %q does not match %s", l, re)
		}
	}
	if lines[1] != "upload: 4.0 MiB of 8.0 MiB (50%), 341.3 KiB/s, 12s left" {
		t.Errorf("line at 12 s = %q", lines[1])
	}
	if strings.Contains(out.String(), "\r") {
		t.Error("plain progress has a carriage return")
	}
}

func TestProgressBar(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	var out bytes.Buffer
	p := newProgress(&out, true, 100, 1<<30, now, 0)
	for range 20 {
		clock = clock.Add(50 * time.Millisecond)
		p.add(50 << 20)
	}
	p.add(1<<30 - 20*(50<<20))
	p.finish()
	s := out.String()
	// 20 updates 50 ms apart are drawn at most every 100 ms, plus the final draw.
	if n := strings.Count(s, "\r"); n != 11 {
		t.Errorf("%d redraws, want 11:\n%q", n, s)
	}
	frames := strings.Split(s, "\r")
	if f := frames[1]; !strings.HasPrefix(f, "[===  ") || !strings.Contains(f, "100.0 MiB / 1.0 GiB") || !strings.Contains(f, "1000.0 MiB/s") || !strings.Contains(f, "left") {
		t.Errorf("first frame = %q", f)
	}
	if last := frames[len(frames)-1]; !strings.Contains(last, "100%") || !strings.HasSuffix(last, "\x1b[K\n") {
		t.Errorf("last frame = %q", last)
	}
	for _, f := range frames[1:] {
		if len(strings.TrimSuffix(strings.TrimSuffix(f, "\n"), "\x1b[K")) > 100 {
			t.Errorf("frame wider than the terminal: %q", f)
		}
	}

	out.Reset()
	small := newProgress(&out, true, 100, 1<<20, now, 0)
	small.add(1 << 20)
	small.finish()
	if out.Len() != 0 {
		t.Errorf("a small upload drew a bar: %q", out.String())
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 30: "5.0 GiB", 300 << 40: "300.0 TiB"} {
		if got := formatBytes(in); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[time.Duration]string{45 * time.Second: "45s", 184 * time.Second: "3m04s", 7500 * time.Second: "2h05m"} {
		if got := formatDuration(in); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", in, got, want)
		}
	}
}
