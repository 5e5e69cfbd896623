// Package postproc runs the trace post-processor, which turns raw traces
// into Accel-Sim's input, and owns the move from processing to ready or
// failed.
//
// Per trace it runs `<command> <trace dir>/traces -j <cpus>` with its
// output in $CASCADE_DATA_DIR/work/postprocess/<trace id>.log. A non-zero
// exit fails the trace with the exit code and the log's last 5 lines; an
// exit 0 that left no traces/kernelslist.g fails it too. An upload that
// already holds kernelslist.g skips the command. At most Concurrency
// post-processors run at once; the rest wait in order.
//
// A marker file (<trace id>.running) exists from the start of a
// post-processor until it succeeds, so a server that stopped or died
// mid-run, or a retry after a failure, knows that a kernelslist.g it finds
// may be partial output, and runs the command again.
package postproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/internal/proc"
	"github.com/cascade-sim/cascade/tracedir"
)

// Store is the storage the post-processor needs; *db.DB implements it.
type Store interface {
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	AllTraces(ctx context.Context) ([]cascade.Trace, error)
	UpdateTrace(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) error) (cascade.Trace, bool, error)
	ReplaceKernelsFrom(ctx context.Context, traceID string, fill func(add func([]cascade.Kernel) error) error) error
}

// Config configures a Processor.
type Config struct {
	// Command is the post-processor and any leading arguments; the trace's
	// traces directory, -j and the CPU count are appended.
	Command     []string
	Root        string // the bucket prefix directory holding the traces
	WorkDir     string // $CASCADE_DATA_DIR/work
	Concurrency int    // post-processors at once; 1 when 0
	CPUs        int    // the -j value; runtime.NumCPU() when 0
	Store       Store
	Events      interface{ Publish(events.Event) }
	// Moved, if set, is told after a trace moved to ready or failed.
	Moved  func(id string)
	Logger *slog.Logger
}

// Processor queues and runs post-processing. Process and LogPath are safe
// for concurrent use; Run is called once.
type Processor struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	queue  []string
	queued map[string]bool
	wake   chan struct{}
}

// New returns a Processor; call Run to start it.
func New(cfg Config) *Processor {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = runtime.NumCPU()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Processor{cfg: cfg, log: log.With("component", "postproc"), queued: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// Process queues the trace with the given id; queuing it twice is a no-op.
// The dir argument is ignored: traces are found under Config.Root.
func (p *Processor) Process(id, _ string) {
	p.mu.Lock()
	if !p.queued[id] {
		p.queued[id] = true
		p.queue = append(p.queue, id)
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *Processor) next() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return "", false
	}
	id := p.queue[0]
	p.queue = p.queue[1:]
	delete(p.queued, id)
	return id, true
}

// LogPath is the post-processing log of the trace with the given id.
func (p *Processor) LogPath(id string) string {
	return filepath.Join(p.cfg.WorkDir, "postprocess", id+".log")
}

func (p *Processor) markerPath(id string) string {
	return filepath.Join(p.cfg.WorkDir, "postprocess", id+".running")
}

// Run queues every trace still processing (a restart redoes them), then
// runs queued post-processors until ctx is done. Running ones are stopped
// with their whole process group and left processing for the next start.
func (p *Processor) Run(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(p.cfg.WorkDir, "postprocess"), 0o755); err != nil {
		return fmt.Errorf("create post-processing directory: %w", err)
	}
	ts, err := p.cfg.Store.AllTraces(ctx)
	if err != nil {
		return fmt.Errorf("load traces: %w", err)
	}
	for _, t := range ts {
		if t.State == cascade.TraceProcessing {
			p.Process(t.ID, "")
		}
	}
	var wg sync.WaitGroup
	for range p.cfg.Concurrency {
		wg.Go(func() {
			for {
				id, ok := p.next()
				if !ok {
					select {
					case <-ctx.Done():
						return
					case <-p.wake:
						p.rewake()
						continue
					}
				}
				p.handle(ctx, id)
			}
		})
	}
	wg.Wait()
	return nil
}

// rewake passes a wake-up on when more work waits, so every idle worker
// gets a turn.
func (p *Processor) rewake() {
	p.mu.Lock()
	more := len(p.queue) > 1
	p.mu.Unlock()
	if more {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func (p *Processor) handle(ctx context.Context, id string) {
	t, err := p.cfg.Store.Trace(ctx, id)
	if err != nil || t.State != cascade.TraceProcessing {
		return // gone, or moved on (retried, removed) since it was queued
	}
	dir := filepath.Join(p.cfg.Root, id)
	marker := p.markerPath(id)
	_, interrupted := os.Stat(marker)
	if interrupted == nil {
		p.log.Info("post-processing was interrupted; running it again", "trace", id)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG))); err == nil && interrupted != nil {
		p.finish(ctx, id, dir, "")
		return
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		p.log.Error("write marker", "trace", id, "err", err)
		return
	}
	p.log.Info("post-processing", "trace", id, "command", p.cfg.Command[0])
	logPath := p.LogPath(id)
	args := append(append([]string(nil), p.cfg.Command...), filepath.Join(dir, tracedir.TracesDir), "-j", strconv.Itoa(p.cfg.CPUs))
	res, err := proc.Run(ctx, proc.Cmd{
		Args: args,
		Dir:  dir,
		Env:  []string{"CASCADE_WORK_DIR=" + p.cfg.WorkDir},
		Log:  logPath,
		Grew: func() { p.cfg.Events.Publish(events.LogGrew{Kind: "postprocess", ID: id}) },
	})
	if ctx.Err() != nil {
		return // stopped by shutdown: the marker stays, the trace stays processing
	}
	switch {
	case errors.Is(err, proc.ErrNotFound):
		p.finish(ctx, id, dir, fmt.Sprintf("post-processor not found: %v (set CASCADE_POSTPROCESS_CMD)", err))
	case err != nil:
		p.finish(ctx, id, dir, fmt.Sprintf("post-processor: %v", err))
	case res.ExitCode != 0:
		p.finish(ctx, id, dir, fmt.Sprintf("post-processor %s: %s", res, p.tail(logPath)))
	default:
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG))); err != nil {
			p.finish(ctx, id, dir, "post-processor exited 0 but wrote no traces/kernelslist.g: "+p.tail(logPath))
			return
		}
		// Only success removes the marker: a retried trace whose
		// post-processor failed runs it again, whatever it left behind.
		os.Remove(marker)
		p.finish(ctx, id, dir, "")
	}
}

func (p *Processor) tail(logPath string) string {
	lines, err := proc.LastLines(logPath, 5)
	if err != nil || len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, "\n")
}

// finish moves the trace to failed with msg, or, when msg is empty, to
// ready with its kernels and the kernel count of kernelslist.g.
func (p *Processor) finish(ctx context.Context, id, dir, msg string) {
	var w tracedir.Warnings
	count := 0
	var tree *tracedir.Tree
	if msg == "" {
		var err error
		if count, err = tracedir.CountKernelLines(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG))); err != nil {
			msg = fmt.Sprintf("%s: %v", tracedir.KernelsListG, err)
		} else if tree, err = tracedir.Walk(dir); err != nil {
			msg = err.Error()
		}
	}
	if msg == "" {
		// A stats file that cannot be read fails the trace; a database
		// error leaves it processing for the next start.
		var readErr error
		err := p.cfg.Store.ReplaceKernelsFrom(ctx, id, func(add func([]cascade.Kernel) error) error {
			var addErr error
			readErr = tree.EachKernels(&w, 2000, func(b []cascade.Kernel) error { addErr = add(b); return addErr })
			if addErr != nil {
				readErr = nil
			}
			return errors.Join(readErr, addErr)
		})
		switch {
		case readErr != nil:
			msg = readErr.Error()
		case err != nil:
			if ctx.Err() == nil {
				p.log.Error("save kernels", "trace", id, "err", err)
			}
			return
		}
	}
	t, saved, err := p.cfg.Store.UpdateTrace(ctx, id, func(t *cascade.Trace, found bool) error {
		if !found || t.State != cascade.TraceProcessing {
			return db.ErrUnchanged
		}
		if msg != "" {
			t.State, t.Error = cascade.TraceFailed, &msg
			return nil
		}
		t.State, t.Error, t.KernelCount = cascade.TraceReady, nil, count
		t.Warnings = append(t.Warnings[:0:0], w.Result()...)
		if t.Warnings == nil {
			t.Warnings = []string{}
		}
		return nil
	})
	if err != nil {
		p.log.Error("save trace", "trace", id, "err", err)
		return
	}
	if !saved {
		return
	}
	if msg != "" {
		p.log.Warn("trace failed", "trace", id, "error", msg)
	} else {
		p.log.Info("trace ready", "trace", id, "kernels", count)
	}
	p.cfg.Events.Publish(events.TraceUpdated{Trace: t})
	if p.cfg.Moved != nil {
		p.cfg.Moved(id)
	}
}
