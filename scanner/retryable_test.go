package scanner_test

import (
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestRetryable: only a trace its own metadata.json failed is beyond a
// retry's help.
func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		t    cascade.Trace
		want bool
	}{
		{cascade.Trace{State: cascade.TraceFailed, Error: cascade.Ptr(`metadata.json: line 2, column 15: invalid character ']'`)}, false},
		{cascade.Trace{State: cascade.TraceFailed, Error: cascade.Ptr(`metadata.json: status "failed": out of memory`)}, false},
		{cascade.Trace{State: cascade.TraceFailed, Error: cascade.Ptr("post-processor exit 1: s3://cascade/traces/t/traces/kernelslist:4: ...")}, true},
		{cascade.Trace{State: cascade.TraceReady}, true},
	} {
		if got := c.t.Retryable(); got != c.want {
			t.Errorf("%s %q: retryable %v, want %v", c.t.State, cascade.Deref(c.t.Error), got, c.want)
		}
	}
}
