package results

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/tracedir"
)

// traceSums caches CurrentTraceSum by trace and the kernel list's size
// and modification time: a trace's processed files are written once, by
// its post-processor, which writes the kernel list last.
var traceSums sync.Map // traceSumKey → string

type traceSumKey struct {
	list  string
	size  int64
	mtime time.Time
}

// CurrentTraceSum returns the [runs.TraceSum] of the trace's processed files
// as they are now, which a run's recorded traceSum is compared with: they
// differ once the trace was post-processed again after the run launched
// (its data files changed, or a retry). It is computed once for each
// kernel list written.
func (m *Reader) CurrentTraceSum(traceID string) (string, error) {
	list := filepath.Join(m.cfg.BucketDir, traceID, filepath.FromSlash(tracedir.KernelsListG))
	info, err := os.Stat(list)
	if err != nil {
		return "", err
	}
	key := traceSumKey{list: list, size: info.Size(), mtime: info.ModTime()}
	if s, ok := traceSums.Load(key); ok {
		return s.(string), nil
	}
	s, err := runs.TraceSum(list)
	if err != nil {
		return "", err
	}
	traceSums.Store(key, s)
	return s, nil
}
