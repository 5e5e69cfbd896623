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

// TestAddResult: warnings read back from a child's Result keep its count
// of those left out.
func TestAddResult(t *testing.T) {
	var child Warnings
	for range MaxWarnings + 3 {
		child.Addf("short")
	}
	var w Warnings
	w.AddResult(child.Result())
	w.Addf("stats")
	got := w.Result()
	if len(got) != MaxWarnings+1 || got[len(got)-1] != "... and 4 more" {
		t.Errorf("%d warnings ending %q, want %d ending \"... and 4 more\"", len(got), got[len(got)-1], MaxWarnings+1)
	}
}
