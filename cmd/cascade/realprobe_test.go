package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
	"github.com/cascade-sim/cascade/upload"
)

// realProbe is the real simulator's probe answers (a server's
// simprobe.json, see runs.Config.ProbeCache) as the first server of this
// test process on the real checkout wrote them. A probe of the real
// simulator costs about 17 CPU-seconds (24 one-instruction kernels, one
// per binary version, and a run per config): real-simulator tests that do
// not test the probe start their servers with its answers, as a server
// restarted on the same data directory does (runs' probe cache: same
// simulator binary and config files, or probed again).
var realProbe struct {
	mu   sync.Mutex
	json []byte
	// probing is open while a server realServer started probes with no
	// answers to start from: the real-simulator tests run in parallel,
	// and a second server started meanwhile waits for those answers
	// rather than probing too.
	probing chan struct{}
}

// realServer is checkoutServer on the real Accel-Sim checkout, its data
// directory given the probe answers of an earlier server of this process
// when there are any (waiting for them while the first server probes);
// the first server's answers are kept for the next ones as soon as it has
// written them. TestRealSimulatorRefuses, whose subject is the probe,
// starts its server with checkoutServer: it probes the real simulator
// every time, and keeps its answers too.
func realServer(t testing.TB, data, checkout string, env ...string) (string, *testkit.SyncBuffer, *exec.Cmd) {
	t.Helper()
	seed, first := realProbeAnswers(t)
	cache := filepath.Join(data, "simprobe.json")
	if seed != nil {
		if err := os.WriteFile(cache, seed, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr, out, cmd := checkoutServer(t, data, append([]string{"CASCADE_ACCELSIM_DIR=" + checkout}, env...)...)
	if first != nil {
		// The server probes in the background and writes its answers (by
		// a rename) when done; until then, or this test's end, the others
		// wait.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		t.Cleanup(cancel)
		go func() {
			defer close(first)
			for !keepRealProbe(cache) {
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
	}
	return addr, out, cmd
}

// realProbeAnswers returns the probe answers kept so far, waiting while
// another server probes; with none (and none coming) it returns a channel
// to close once this caller's server has probed.
func realProbeAnswers(t testing.TB) (seed []byte, first chan struct{}) {
	for {
		realProbe.mu.Lock()
		if realProbe.json != nil {
			defer realProbe.mu.Unlock()
			return realProbe.json, nil
		}
		wait := realProbe.probing
		if wait == nil {
			realProbe.probing = make(chan struct{})
			defer realProbe.mu.Unlock()
			first := realProbe.probing
			return nil, first
		}
		realProbe.mu.Unlock()
		select {
		case <-wait:
		case <-time.After(6 * time.Minute):
			t.Fatal("the first real-simulator server's probe answers never came")
		}
		realProbe.mu.Lock()
		if realProbe.probing == wait && realProbe.json == nil {
			realProbe.probing = nil // that probe failed: the next caller probes
		}
		realProbe.mu.Unlock()
	}
}

// keepRealProbe keeps the probe answers in the file cache, when there
// (the probe finished), for the servers realServer starts next, and says
// whether it found them.
func keepRealProbe(cache string) bool {
	b, err := os.ReadFile(cache)
	if err != nil {
		return false
	}
	realProbe.mu.Lock()
	defer realProbe.mu.Unlock()
	if realProbe.json == nil {
		realProbe.json = b
	}
	return true
}

// realLLMTrace starts a server on the real simulator (realServer, two
// simulations at once), uploads into its bucket directory the LLM-like
// trace cfg builds from the real vecAdd kernel, raw, as "llm", and waits
// until it is READY. It returns the server's address and the trace's
// launches.
func realLLMTrace(t testing.TB, cfg tracegen.LLMConfig) (addr string, launches int) {
	t.Helper()
	checkout := testkit.RealAccelSim(t)
	cfg.From = testkit.RealTrace(t, "vecadd-sm61")
	gen := t.TempDir()
	res, err := tracegen.GenerateLLM(context.Background(), gen, cfg)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	addr, out, _ := realServer(t, data, checkout, "CASCADE_RUN_CONCURRENCY=2")
	testkit.Eventually(t, 10*time.Second, "start-up report", func() bool { return strings.Contains(out.String(), "cascade: S3 endpoint") })
	if _, err := upload.Upload(context.Background(), upload.Options{Source: gen, PrefixDir: filepath.Join(data, "s3", "cascade", "traces"), RunName: "llm"}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, addr, "llm", "READY")
	return addr, len(res.Launches)
}
