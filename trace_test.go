package cascade_test

import (
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestTraceStateIs: a refusal's sentence about a trace's state reads as
// English ("trace "x" has failed", never "is failed").
func TestTraceStateIs(t *testing.T) {
	for s, want := range map[cascade.TraceState]string{
		cascade.TraceUploading: "is uploading", cascade.TraceProcessing: "is being processed", cascade.TraceReady: "is ready", cascade.TraceFailed: "has failed",
	} {
		if got := s.Is(); got != want {
			t.Errorf("%s.Is() = %q, want %q", s, got, want)
		}
	}
}
