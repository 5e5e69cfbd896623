package postproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/internal/proc"
)

// TestReasonIsTheLogsLastFiveLines: a failed post-processor's reason is
// its log's last 5 lines (the Traces guide); the built-in one's error
// line, its last, comes first without its prefix (QA: the built-in one's
// reason was that line alone).
func TestReasonIsTheLogsLastFiveLines(t *testing.T) {
	log := filepath.Join(t.TempDir(), "t.log")
	lines := []string{"one", "two", "three", "four", "five", "six", ErrorPrefix + "traces/kernel-1.trace:45591: bad line"}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		format string
		want   []string
	}{
		{FormatTracez, []string{"traces/kernel-1.trace:45591: bad line", "three", "four", "five", "six"}},
		{"", lines[2:]},
	} {
		p := &Processor{cfg: Config{Format: tt.format}}
		if got, want := p.reason(log), strings.Join(tt.want, "\n"); got != want {
			t.Errorf("format %q: reason\n%s\nwant\n%s", tt.format, got, want)
		}
	}
}

// TestMemoryHint: a post-processor the OOM killer took says so, and what
// takes less; one killed from outside where that cannot be told says
// what usually sends the signal; any other end says nothing more.
func TestMemoryHint(t *testing.T) {
	if h := memoryHint(proc.Result{ExitCode: -1, Signal: "killed", OOMKilled: true}); !strings.Contains(h, "out of memory") || !strings.Contains(h, "CASCADE_POSTPROCESS_CONCURRENCY") {
		t.Errorf("OOM killed: %q", h)
	}
	if h := memoryHint(proc.Result{ExitCode: -1, Signal: "killed", OOMUnknown: true}); !strings.Contains(h, "OOM killer is the usual sender") {
		t.Errorf("cause unknown: %q", h)
	}
	for _, r := range []proc.Result{{ExitCode: 2}, {ExitCode: -1, Signal: "killed"}, {ExitCode: -1, Signal: "segmentation fault"}} {
		if h := memoryHint(r); h != "" {
			t.Errorf("%v: %q", r, h)
		}
	}
}
