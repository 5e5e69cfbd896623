package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/results"
)

// csvStore is what the CSV downloads look up before they write.
type csvStore interface {
	Run(ctx context.Context, id string) (cascade.Run, error)
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	Sweep(ctx context.Context, id string) (cascade.Sweep, error)
}

// csvRoutes adds the CSV downloads of runs, traces and sweeps to mux,
// each readable with a read-only token.
func csvRoutes(mux *http.ServeMux, tokens cascade.Tokens, store csvStore, rd *results.Reader, co *results.Correlator, log *slog.Logger) {
	run := func(file string, write func(ctx context.Context, w io.Writer, r cascade.Run) error) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r, err := store.Run(req.Context(), req.PathValue("id"))
			if found(w, log, "run", req.PathValue("id"), err) {
				download(w, req, log, "run-"+r.ID+"-"+file, func(w io.Writer) error { return write(req.Context(), w, r) })
			}
		})
	}
	trace := func(file string, write func(ctx context.Context, w io.Writer, id string) error) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			id := req.PathValue("id")
			_, err := store.Trace(req.Context(), id)
			if found(w, log, "trace", id, err) {
				download(w, req, log, "trace-"+id+"-"+file, func(w io.Writer) error { return write(req.Context(), w, id) })
			}
		})
	}
	handle := func(pattern string, h http.Handler) {
		mux.Handle("GET "+pattern, tokens.Require(cascade.RoleReadOnly, h))
	}
	// The run's kernels, one row each with its statistics.
	handle("/runs/{id}/kernels.csv", run("kernels.csv", func(ctx context.Context, w io.Writer, r cascade.Run) error {
		return rd.WriteKernelsCSV(ctx, w, r, 0)
	}))
	// The run's statistics against the trace's hardware counters: the
	// figures, and every pair.
	handle("/runs/{id}/correlation.csv", run("correlation.csv", co.WriteCorrelationCSV))
	handle("/runs/{id}/counters.csv", run("counters.csv", co.WriteCounterPairsCSV))
	// What the run standing for each config of the trace gave (its latest
	// succeeded run that is not sampled, a sampled one only when it has no
	// other), and how each matches the trace's hardware counters.
	handle("/traces/{id}/configs.csv", trace("configs.csv", rd.WriteConfigsCSV))
	handle("/traces/{id}/correlation.csv", trace("correlation.csv", co.WriteConfigCorrelationCSV))
	// The sweep's grid cell by cell, per kernel name and per model step,
	// speedups against the cell ?baseline= names (by default the shipped
	// one); a baseline that is not one of its cells is 400.
	handle("/sweeps/{id}/design.csv", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.PathValue("id")
		s, err := store.Sweep(req.Context(), id)
		if !found(w, log, "sweep", id, err) {
			return
		}
		baseline := req.URL.Query().Get("baseline")
		if baseline != "" && !slices.Contains(s.SimConfigs, baseline) {
			http.Error(w, "400 baseline: "+strconv.Quote(baseline)+" is not a cell of sweep "+id, http.StatusBadRequest)
			return
		}
		download(w, req, log, "sweep-"+id+"-design.csv", func(w io.Writer) error { return rd.WriteDesignCSV(req.Context(), w, id, baseline) })
	}))
}

// found reports whether the lookup of the kind's id found it; when it did
// not, it answered 404 (500 on another error, logged).
func found(w http.ResponseWriter, log *slog.Logger, kind, id string, err error) bool {
	switch {
	case cascade.ErrorCode(err) == cascade.ENOTFOUND:
		http.Error(w, "404 no "+kind+" "+id, http.StatusNotFound)
		return false
	case err != nil:
		log.Error("CSV download", kind, id, "err", err)
		http.Error(w, "500 could not read the "+kind, http.StatusInternalServerError)
		return false
	}
	return true
}

// download streams what write writes as the CSV attachment file, flushed
// as it goes. An error before anything was sent is a 500; one once the
// rows have begun cuts the response short (the client sees an incomplete
// download, never a file that looks whole).
func download(w http.ResponseWriter, req *http.Request, log *slog.Logger, file string, write func(io.Writer) error) {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+file+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	sw := &sentWriter{w: w}
	if err := write(sw); err != nil {
		if !errors.Is(err, context.Canceled) {
			log.Error("CSV download", "path", req.URL.Path, "err", err)
		}
		if !sw.sent {
			h.Del("Content-Disposition")
			http.Error(w, "500 could not write "+file, http.StatusInternalServerError)
			return
		}
		panic(http.ErrAbortHandler)
	}
}

// sentWriter is a response writer's body that knows whether anything was
// sent, and flushes it.
type sentWriter struct {
	w    http.ResponseWriter
	sent bool
}

func (s *sentWriter) Write(p []byte) (int, error) {
	s.sent = s.sent || len(p) > 0
	return s.w.Write(p)
}

// Flush sends what was written so far.
func (s *sentWriter) Flush() { http.NewResponseController(s.w).Flush() }
