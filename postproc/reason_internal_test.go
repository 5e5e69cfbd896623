package postproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
