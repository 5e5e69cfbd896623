package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/results"
)

// kernelsCSV serves GET /runs/{id}/kernels.csv: the run's kernels, one row
// each with its statistics, as results.Reader.WriteKernelsCSV writes them,
// streamed as they are read. A run that is not there is 404; an error
// once the rows have begun cuts the response short (the client sees an
// incomplete download, never a file that looks whole).
func kernelsCSV(store interface {
	Run(ctx context.Context, id string) (cascade.Run, error)
}, rd *results.Reader, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.PathValue("id")
		r, err := store.Run(req.Context(), id)
		switch {
		case cascade.ErrorCode(err) == cascade.ENOTFOUND:
			http.Error(w, "404 no run "+id, http.StatusNotFound)
			return
		case err != nil:
			log.Error("kernels CSV", "run", id, "err", err)
			http.Error(w, "500 could not read the run", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="run-`+r.ID+`-kernels.csv"`)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		sw := &sentWriter{w: w}
		if err := rd.WriteKernelsCSV(req.Context(), sw, r, 0); err != nil {
			if !errors.Is(err, context.Canceled) {
				log.Error("kernels CSV", "run", id, "err", err)
			}
			if !sw.sent {
				h.Del("Content-Disposition")
				http.Error(w, "500 could not read the run's kernels", http.StatusInternalServerError)
				return
			}
			panic(http.ErrAbortHandler)
		}
	})
}

// configsCSV serves GET /traces/{id}/configs.csv: what each config's
// latest succeeded run of the trace gave, the run's totals and every
// kernel's, as results.Reader.WriteConfigsCSV writes them. A trace that
// is not there is 404.
func configsCSV(store interface {
	Trace(ctx context.Context, id string) (cascade.Trace, error)
}, rd *results.Reader, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.PathValue("id")
		_, err := store.Trace(req.Context(), id)
		switch {
		case cascade.ErrorCode(err) == cascade.ENOTFOUND:
			http.Error(w, "404 no trace "+id, http.StatusNotFound)
			return
		case err != nil:
			log.Error("configs CSV", "trace", id, "err", err)
			http.Error(w, "500 could not read the trace", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="trace-`+id+`-configs.csv"`)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		sw := &sentWriter{w: w}
		if err := rd.WriteConfigsCSV(req.Context(), sw, id); err != nil {
			if !errors.Is(err, context.Canceled) {
				log.Error("configs CSV", "trace", id, "err", err)
			}
			if !sw.sent {
				h.Del("Content-Disposition")
				http.Error(w, "500 could not compare the trace's runs", http.StatusInternalServerError)
				return
			}
			panic(http.ErrAbortHandler)
		}
	})
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

// designCSV serves GET /sweeps/{id}/design.csv: the sweep's grid cell by
// cell, per kernel name and per model step, speedups against the cell
// ?baseline= names (by default the shipped one), as
// results.Reader.WriteDesignCSV writes it. A sweep that is not there is
// 404, a baseline that is not one of its cells 400.
func designCSV(store interface {
	Sweep(ctx context.Context, id string) (cascade.Sweep, error)
}, rd *results.Reader, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.PathValue("id")
		s, err := store.Sweep(req.Context(), id)
		switch {
		case cascade.ErrorCode(err) == cascade.ENOTFOUND:
			http.Error(w, "404 no sweep "+id, http.StatusNotFound)
			return
		case err != nil:
			log.Error("design CSV", "sweep", id, "err", err)
			http.Error(w, "500 could not read the sweep", http.StatusInternalServerError)
			return
		}
		baseline := req.URL.Query().Get("baseline")
		if baseline != "" && !slices.Contains(s.SimConfigs, baseline) {
			http.Error(w, "400 baseline: "+strconv.Quote(baseline)+" is not a cell of sweep "+id, http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="sweep-`+id+`-design.csv"`)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		sw := &sentWriter{w: w}
		if err := rd.WriteDesignCSV(req.Context(), sw, id, baseline); err != nil {
			if !errors.Is(err, context.Canceled) {
				log.Error("design CSV", "sweep", id, "err", err)
			}
			if !sw.sent {
				h.Del("Content-Disposition")
				http.Error(w, "500 could not read the sweep's runs", http.StatusInternalServerError)
				return
			}
			panic(http.ErrAbortHandler)
		}
	})
}
