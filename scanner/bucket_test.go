package scanner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/scanner"
	"github.com/cascade-sim/cascade/testkit/memstore"
)

// TestRunLeavesMissingBucket: a scanner that starts while the bucket
// directory is gone leaves it gone. The server creates it before it is
// ready; one moved away after that is the operator's to bring back
// (/healthz says it is gone), and a scanner that started late once put an
// empty one in its place (TestHealthzBucket failed so under load).
func TestRunLeavesMissingBucket(t *testing.T) {
	root := filepath.Join(t.TempDir(), "bucket")
	s := scanner.New(scanner.Config{Root: root, Store: memstore.New(), Events: &events.Broker{}, Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.Run(ctx); err != nil && ctx.Err() == nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("the bucket directory after Run: %v, want it still missing", err)
	}
}
