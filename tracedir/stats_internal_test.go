package tracedir

import (
	"regexp"
	"testing"
)

// TestTraceFileID: traceFileID finds the id ^kernel-(\d+) finds.
func TestTraceFileID(t *testing.T) {
	re := regexp.MustCompile(`^kernel-(\d+)`)
	for _, name := range []string{
		"kernel-12-ctx_0x1.trace.xz", "kernel-7.trace", "kernel-0", "kernel-", "kernel-x1", "kernel12",
		"Kernel-1.trace", " kernel-1", "kernel-١٢", "kernel-99999999999999999999.trace", "12", "",
	} {
		want := ""
		if m := re.FindStringSubmatch(name); m != nil {
			want = m[1]
		}
		if got := traceFileID(name); got != want {
			t.Errorf("traceFileID(%q) = %q, want %q", name, got, want)
		}
	}
}
