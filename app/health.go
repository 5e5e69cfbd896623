package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"sync/atomic"
	"time"

	"github.com/cascade-sim/cascade/internal/buildinfo"
)

// healthTimeout bounds each check of /healthz: a database that does not
// answer SELECT 1, or a bucket on a hung network file system, within it is
// reported unreachable.
const healthTimeout = 2 * time.Second

// Phases of a starting server, as /healthz reports them.
const (
	phaseMigrating = "migrating" // connecting to the database and migrating its schema
	phaseStarting  = "starting"  // migrated; seeding, starting the workers
	phaseReady     = "ok"
)

// front is the server's HTTP handler from the moment it listens. Until the
// server is ready it answers /healthz with 503 and the phase, /metrics with
// what is known so far, and everything else with 503; then it hands every
// request to the server's mux, /healthz and /metrics aside.
type front struct {
	bucketDir string
	metrics   http.Handler

	phase atomic.Value // string: phaseMigrating, phaseStarting, phaseReady
	ready atomic.Pointer[ready]
}

// ready is what a ready server serves with.
type ready struct {
	mux http.Handler
	db  interface{ Ping(context.Context) error }
}

func newFront(bucketDir string, metrics http.Handler) *front {
	f := &front{bucketDir: bucketDir, metrics: metrics}
	f.phase.Store(phaseMigrating)
	return f
}

// open starts serving mux; db is what /healthz pings from now on.
func (f *front) open(mux http.Handler, db interface{ Ping(context.Context) error }) {
	f.ready.Store(&ready{mux: mux, db: db})
	f.phase.Store(phaseReady)
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		f.health(w, r)
		return
	case "/metrics":
		f.metrics.ServeHTTP(w, r)
		return
	}
	rd := f.ready.Load()
	if rd == nil {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "cascade is starting ("+f.phase.Load().(string)+"); /healthz says when it is ready", http.StatusServiceUnavailable)
		return
	}
	rd.mux.ServeHTTP(w, r)
}

// build is read once: it never changes while the binary runs.
var build = buildinfo.Get()

// Health is the body of /healthz: Status is "ok" (200), or "migrating",
// "starting" or "unavailable" (503); Database and Bucket are "ok" or say
// what is wrong.
type Health struct {
	Status   string `json:"status"`
	Database string `json:"database"`
	Bucket   string `json:"bucket"`
	// Build is the running build's version, commit and date.
	Build buildinfo.Info `json:"build"`
}

func (f *front) health(w http.ResponseWriter, r *http.Request) {
	phase := f.phase.Load().(string)
	h := Health{Status: phase, Database: "ok", Build: build}
	if phase == phaseMigrating {
		h.Database = phaseMigrating
	}
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	bucket := make(chan error, 1)
	go func() { bucket <- checkDir(f.bucketDir) }()
	if rd := f.ready.Load(); rd != nil {
		h.Database = result(rd.db.Ping(ctx))
		if h.Database != "ok" {
			h.Status = "unavailable"
		}
	}
	select {
	case err := <-bucket:
		h.Bucket = result(err)
	case <-ctx.Done():
		h.Bucket = fmt.Sprintf("stat %s: no answer within %v", f.bucketDir, healthTimeout)
	}
	if h.Bucket != "ok" && h.Status == phaseReady {
		h.Status = "unavailable"
	}
	code := http.StatusOK
	if h.Status != phaseReady {
		code = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(h)
}

// checkDir says whether dir is a directory the server can reach.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

func result(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %v: %v", healthTimeout, err)
	}
	return err.Error()
}

// pprofHandler serves net/http/pprof's index and profiles under
// /debug/pprof/.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
