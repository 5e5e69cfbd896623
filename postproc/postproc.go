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
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/accelsim/posttraces"
	"github.com/cascade-sim/cascade/internal/proc"
	"github.com/cascade-sim/cascade/internal/workqueue"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/cascade-sim/cascade/tracestate"
)

// Store is the storage the post-processor needs; *db.DB implements it.
type Store interface {
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	AllTraces(ctx context.Context) ([]cascade.Trace, error)
	UpdateTrace(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) error) (cascade.Trace, bool, error)
	ReplaceKernelsFrom(ctx context.Context, traceID string, fill func(add func([]cascade.Kernel) error) error) error
	// UpdateTraces is many UpdateTrace in one transaction, each trace's
	// kernels with it (batch.go).
	UpdateTraces(ctx context.Context, ws []cascade.TraceWrite) ([]cascade.TraceWritten, error)
	// ReplaceKernelCounters replaces the hardware counters of the trace's
	// kernels, read from its profiles as it becomes ready.
	ReplaceKernelCounters(ctx context.Context, traceID string, cs []cascade.KernelCounter) error
	// KernelRange returns the trace's stored kernels whose seq is in
	// [from, to): the list a ready trace's profiles are matched to when
	// they are read again (reprofile.go).
	KernelRange(ctx context.Context, traceID string, from, to int) ([]cascade.Kernel, error)
}

// Config configures a Processor.
type Config struct {
	// Command is the post-processor and any leading arguments; the trace's
	// traces directory, -j and the CPU count are appended.
	Command []string
	Root    string // the bucket prefix directory holding the traces
	// Objects is how users name what Root holds, "s3://cascade/traces":
	// failures name a trace's files so, not by the server's paths. ""
	// keeps the paths.
	Objects     string
	WorkDir     string // $CASCADE_DATA_DIR/work
	Concurrency int    // post-processors at once; 1 when 0
	// CPUs is what the post-processors share; runtime.GOMAXPROCS(0) when
	// 0, which since Go 1.25 follows this process's CPU affinity and
	// cgroup quota (runtime.NumCPU sees the affinity only).
	CPUs   int
	Jobs   int // the -j of every post-processor; 0 gives each its share of CPUs
	Store  Store
	Events cascade.Publisher
	// Finished, if set, is told how long each post-processor that ran to
	// its end took and whether it succeeded, for /metrics.
	Finished func(d time.Duration, ok bool)
	// Writing, if set, is scanner.Config's: a trace's files walked while
	// the S3 endpoint wrote one are walked again once it is done.
	Writing func(id string, since time.Time) bool
	Logger  *slog.Logger

	// Format is what Command writes, FormatTracez or FormatTraceg, when it
	// is known (the built-in post-processor); "" for another command. A
	// retried trace whose processed files are in the other format is
	// processed again (retryTrace after CASCADE_TRACE_FORMAT changed).
	Format string

	// CounterMap pairs profilers' counters with simulator statistics
	// when a trace's profiles are read; nil is hwprofile.Builtin().
	CounterMap *hwprofile.Mapping
}

// Reporter is told of every trace the post-processor moved to ready or
// failed, once the move is committed; *tracestate.Machine is one.
type Reporter interface {
	Moved(tracestate.Move)
}

// Processor queues and runs post-processing. Process, Stop, Forget and
// LogPath are safe for concurrent use; Run is called once. It is the
// tracestate.Processor of a trace's state machine, and reports its
// outcomes to the Reporter Run is given.
type Processor struct {
	cfg Config
	log *slog.Logger

	// queue holds the ids of traces to post-process, in the order they
	// were queued, and runs handle for at most Concurrency at once.
	queue *workqueue.Queue[string]
	// profiles holds the ids of ready traces whose profiles are to be
	// read again (reprofile.go), one at a time.
	profiles *workqueue.Queue[string]
	// batch holds the traces that skip the post-processor, to finish
	// many in one transaction (batch.go).
	batch *batcher
	// ctx is Run's: it ends with the server. The trace's rows are read and
	// written with it; the post-processor runs under the queue's context,
	// which Stop and Forget end too.
	ctx context.Context
	// to is Run's Reporter.
	to Reporter

	mu      sync.Mutex
	shares  []int           // the -j of each slot, largest first
	busy    []bool          // slots taken by running post-processors
	retried map[string]bool // see Retried

	// outside holds a token for each big ingest that gave its queue slot
	// away (bigIngest), so that a start on many big traces does not
	// ingest them all at once, a few chunks in memory each.
	outside chan struct{}
}

// New returns a Processor; call Run to start it.
func New(cfg Config) *Processor {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = runtime.GOMAXPROCS(0)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Processor{
		cfg: cfg, log: log.With("component", "postproc"),
		shares: splitCPUs(cfg.CPUs, cfg.Concurrency), busy: make([]bool, cfg.Concurrency),
		retried: map[string]bool{}, outside: make(chan struct{}, maxOutside),
		batch: newBatcher(),
	}
	p.queue = workqueue.New(workqueue.Config[string]{Limit: cfg.Concurrency, Work: p.handle, Logger: p.log})
	p.profiles = workqueue.New(workqueue.Config[string]{Limit: 1, Work: p.reprofile, Logger: p.log})
	return p
}

// splitCPUs splits cpus among n post-processors: as evenly as whole CPUs
// allow, largest first, adding up to cpus, and at least 1 each.
func splitCPUs(cpus, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = cpus / n
		if i < cpus%n {
			s[i]++
		}
		s[i] = max(s[i], 1)
	}
	return s
}

// slot takes the free slot with the largest share and returns it with the
// -j its post-processor gets.
func (p *Processor) slot() (int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range p.busy {
		if !b {
			p.busy[i] = true
			if p.cfg.Jobs > 0 {
				return i, p.cfg.Jobs
			}
			return i, p.shares[i]
		}
	}
	panic("postproc: more post-processors than Concurrency")
}

func (p *Processor) freeSlot(i int) {
	p.mu.Lock()
	p.busy[i] = false
	p.mu.Unlock()
}

// Forget stops the post-processing of a trace whose directory left the
// bucket, waiting until it is over (or ctx is done), and removes its
// marker, so that a trace uploaded again under the same name starts
// afresh.
func (p *Processor) Forget(ctx context.Context, id string) error {
	if err := p.queue.Stop(ctx, id, nil); err != nil {
		return err
	}
	if err := p.profiles.Stop(ctx, id, nil); err != nil {
		return err
	}
	if done := p.batch.cancel(id); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.removeMarker(id)
	return nil
}

// Process queues the trace with the given id; queuing it while it waits is
// a no-op. Traces are found under Config.Root.
func (p *Processor) Process(id string) { p.queue.Add(id) }

// Stop ends the post-processor of the trace with the given id, if one
// runs, and leaves the trace as it is: the trace's state machine calls it
// when the trace left processing because its metadata.json says it failed. What it left
// behind counts as partial output, as after a failure.
func (p *Processor) Stop(id string) {
	p.queue.Cancel(id)
	p.batch.cancel(id)
}

// Queued is how many traces wait for a post-processor.
func (p *Processor) Queued() int { return p.queue.Len() }

// Running is how many post-processors are at work.
func (p *Processor) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, b := range p.busy {
		if b {
			n++
		}
	}
	return n
}

// LogPath is the post-processing log of the trace with the given id.
func (p *Processor) LogPath(id string) string {
	return filepath.Join(p.cfg.WorkDir, "postprocess", id+".log")
}

func (p *Processor) markerPath(id string) string {
	return filepath.Join(p.cfg.WorkDir, "postprocess", id+markerExt)
}

// Run queues every trace still processing (a restart redoes them), then
// runs queued post-processors until ctx is done, reporting each trace it
// moves on to to (nil: to none). Running ones are stopped with their
// whole process group and left processing for the next start.
func (p *Processor) Run(ctx context.Context, to Reporter) error {
	if err := os.MkdirAll(filepath.Join(p.cfg.WorkDir, "postprocess"), 0o755); err != nil {
		return fmt.Errorf("create post-processing directory: %w", err)
	}
	p.settleMarkers()
	// No post-processor of ours runs yet (each dies with the server that
	// started it): the built-in one's spill folders here are leftovers.
	if err := posttraces.RemoveSpills(p.cfg.WorkDir); err != nil {
		p.log.Warn("remove post-processors' leftover spill folders", "dir", p.cfg.WorkDir, "err", err)
	}
	ts, err := p.cfg.Store.AllTraces(ctx)
	if err != nil {
		return fmt.Errorf("load traces: %w", err)
	}
	for _, t := range ts { // in the order they were stored
		if t.State == cascade.TraceProcessing {
			p.queue.Add(t.ID)
		}
	}
	p.ctx, p.to = ctx, to // before the queue starts any work
	var wg sync.WaitGroup
	wg.Go(func() { p.runBatches(ctx) })
	wg.Go(func() { p.profiles.Run(ctx) })
	p.queue.Run(ctx)
	wg.Wait()
	return nil
}

// handle post-processes one queued trace; it is the queue's work. runCtx
// ends when the trace leaves processing (Stop, Forget) or the server
// stops.
func (p *Processor) handle(runCtx context.Context, id string) {
	ctx := p.ctx
	t, err := p.cfg.Store.Trace(ctx, id)
	if err != nil || t.State != cascade.TraceProcessing {
		return // gone, or moved on (retried, removed) since it was queued
	}
	dir := filepath.Join(p.cfg.Root, id)
	list := filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG))
	var stale []string // processed files of the other format, to remove on success
	if p.takeRetried(id) {
		stale = p.staleFormat(dir)
	}
	if _, err := os.Stat(list); err == nil {
		suspect, why := p.suspect(id, dir, list)
		if stale != nil {
			suspect, why = true, "its processed traces are not "+p.cfg.Format
		}
		if raw := rawListed(list); !suspect && raw != "" {
			// An upload's own list that names raw traces: no Accel-Sim
			// reads them, so it is post-processed, or failed when it
			// cannot be.
			if !hasRawList(dir) {
				p.removeMarker(id)
				p.finish(ctx, id, dir, fmt.Sprintf("%s names %s, a raw NVBit trace, which Accel-Sim does not read (it reads the post-processor's "+
					"output), and the upload has no tracer kernel list (traces/kernelslist or kernelslist_ctx_*) to post-process it from: "+
					"upload the trace again with the tracer's kernel list and without %s", tracedir.KernelsListG, raw, tracedir.KernelsListG), false)
				return
			}
			suspect, why = true, fmt.Sprintf("its kernelslist.g names %s, a raw NVBit trace", raw)
		}
		if !suspect {
			p.removeMarker(id) // stale: of a deleted, retried or failed upload
			if smallStats(dir) {
				p.batch.add(id) // finished with others (batch.go)
			} else {
				p.finish(ctx, id, dir, "", false)
			}
			return
		}
		p.log.Info(why+"; running the post-processor again", "trace", id)
	}
	if err := p.writeMarker(id, dir); err != nil {
		// A full disk: fail the trace rather than leave it processing
		// with nothing queued; retryTrace runs it again.
		p.log.Error("write marker", "trace", id, "err", err)
		p.removeMarker(id)
		p.finish(ctx, id, dir, fmt.Sprintf("post-processor not started: %v", err), false)
		return
	}
	slot, jobs := p.slot()
	freed := false
	free := func() {
		if !freed {
			freed = true
			p.freeSlot(slot)
		}
	}
	defer free()
	p.log.Info("post-processing", "trace", id, "command", p.cfg.Command[0], "jobs", jobs)
	logPath := p.LogPath(id)
	args := append(append([]string(nil), p.cfg.Command...), filepath.Join(dir, tracedir.TracesDir), "-j", strconv.Itoa(jobs))
	// What a post-processor of the trace left running when the server
	// was killed outright (Pdeathsig takes the program, not its children)
	// would write beside this one: it goes first.
	abs, _ := filepath.Abs(dir)
	tag := "postprocess " + abs
	if n := proc.KillTagged(tag); n > 0 {
		p.log.Warn("killed what an earlier post-processor of the trace left running", "trace", id, "processes", n)
	}
	start := time.Now()
	res, err := proc.Run(runCtx, proc.Cmd{
		Args: args,
		Dir:  dir,
		Env:  []string{"CASCADE_WORK_DIR=" + p.cfg.WorkDir},
		Log:  logPath,
		Grew: func() { p.cfg.Events.Publish(cascade.LogGrew{Kind: "postprocess", ID: id}) },
		Tag:  tag,
	})
	free() // finish may give the queue's slot away: the next one takes this one
	switch {
	case ctx.Err() != nil:
		return // stopped by shutdown: the marker stays, the trace stays processing
	case runCtx.Err() != nil:
		// Its trace was removed (Forget removes the marker next) or left
		// processing (Stop): what it left is partial output.
		p.log.Info("post-processor stopped: its trace left processing", "trace", id)
		p.leftMarker(id, dir, list)
		return
	}
	// A log that lost output (a full disk) does not decide: the
	// post-processor's exit and its kernelslist.g do.
	var logErr *proc.LogError
	if errors.As(err, &logErr) {
		p.log.Warn("post-processing log incomplete", "trace", id, "err", err)
		err = nil
	}
	var msg string
	switch {
	case errors.Is(err, proc.ErrNotFound):
		msg = fmt.Sprintf("post-processor not found: %v (set CASCADE_POSTPROCESS_CMD)", err)
	case err != nil:
		msg = fmt.Sprintf("post-processor: %v", err)
	case res.ExitCode != 0:
		msg = fmt.Sprintf("post-processor %s%s: %s", res, memoryHint(res), p.reason(logPath))
	default:
		if _, err := os.Stat(list); err != nil {
			msg = "post-processor exited 0 but wrote no traces/kernelslist.g: " + p.tail(logPath)
		}
	}
	if msg != "" && logErr != nil {
		msg += fmt.Sprintf(" (its log is incomplete: %v)", logErr.Err)
	}
	msg = p.forUser(id, msg)
	if p.cfg.Finished != nil {
		p.cfg.Finished(time.Since(start), msg == "")
	}
	// A kernelslist.g left behind is the post-processor's, not the
	// upload's: after a failure it is partial output, and after a success
	// a later upload that leaves it in place (an uploader that only adds
	// files) has not brought its own. Either way it is not skipped on.
	p.leftMarker(id, dir, list)
	if msg == "" && stale != nil {
		p.removeStale(dir, stale)
	}
	p.finish(ctx, id, dir, msg, true)
}

// bigIngest is the kernel count past which a trace's kernels are ingested
// outside the queue's limit: the ingest of a million kernels takes seconds
// of database writes, and other traces, which need a slot for their own
// post-processor or for their few kernels, should not wait for it. Smaller
// ingests keep their slot, so that a start on many finished traces does
// not ingest them all at once.
const bigIngest = 5000

// maxOutside is how many big ingests may run outside the queue's limit at
// once.
const maxOutside = 2

// finish moves the trace to failed with msg (tracestate.ProcessFailed),
// or, when msg is empty, to ready (tracestate.Processed) with its kernels
// and its kernel count: the kernel lines of kernelslist.g, as the Traces
// guide defines kernel_count once ready (its kernels are the stats files'
// rows, those kernelslist.g does not name marked untraced: see
// markUntraced). ran is whether a post-processor
// ran (tracestate.Move.Ran); the built-in one's warnings, at its log's
// end, come first among the trace's.
func (p *Processor) finish(ctx context.Context, id, dir, msg string, ran bool) {
	var w tracedir.Warnings
	count, untraced := 0, 0
	var traced *tracedir.Traced
	var tree *tracedir.Tree
	var counters []cascade.KernelCounter
	var profiles []cascade.ProfileRead
	var pw []string // the profiles' warnings
	if msg == "" && ran && p.cfg.Format != "" {
		// The built-in post-processor's warnings (WriteWarnings), first.
		w.AddResult(builtinWarnings(p.LogPath(id)))
	}
	if msg == "" {
		var err error
		if traced, err = tracedir.ReadTraced(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG))); err != nil {
			msg = fmt.Sprintf("%s: %v", tracedir.KernelsListG, err)
		} else if tree, err = tracedir.StatsTree(dir); err != nil {
			msg = err.Error()
		} else {
			count = traced.Lines
		}
	}
	cur, err := p.cfg.Store.Trace(ctx, id)
	if err != nil || cur.State != cascade.TraceProcessing {
		return // failed by its metadata.json, or removed, meanwhile
	}
	if msg == "" {
		if count > bigIngest {
			select {
			case p.outside <- struct{}{}:
				// The post-processor, what the limit is for, is done.
				defer func() { <-p.outside }()
				p.queue.Release(id)
			default: // as many outside already: this one keeps its slot
			}
		}
		// A stats file that cannot be read fails the trace; a database
		// error leaves it processing for the next start. The profiles
		// metadata.json names are matched to the kernels as listed.
		meta, _ := tracedir.ReadMetadata(dir)
		var hw []hwprofile.Traced
		var readErr error
		err := p.cfg.Store.ReplaceKernelsFrom(ctx, id, func(add func([]cascade.Kernel) error) error {
			var addErr error
			hw = hw[:0]
			untraced = 0
			readErr = tree.EachKernels(&w, 2000, func(b []cascade.Kernel) error {
				untraced += markUntraced(traced, b)
				if len(meta.Profiles) > 0 {
					hw = appendTraced(hw, b)
				}
				addErr = add(b)
				return addErr
			})
			if addErr != nil {
				readErr = nil
			}
			return errors.Join(readErr, addErr)
		})
		if readErr == nil && err == nil {
			traced.Check(&w)
		}
		switch {
		case readErr != nil:
			msg = readErr.Error()
		case err != nil:
			if ctx.Err() == nil {
				p.log.Error("save kernels", "trace", id, "err", err)
			}
			return
		}
		if msg == "" && (len(meta.Profiles) > 0 || len(cur.Profiles) > 0) {
			counters, profiles, pw = readProfiles(dir, meta.Profiles, hw, p.cfg.CounterMap)
			if err := p.cfg.Store.ReplaceKernelCounters(ctx, id, counters); err != nil {
				if ctx.Err() == nil {
					p.log.Error("save kernel counters", "trace", id, "err", err)
				}
				return
			}
		}
	}
	if msg == "" {
		if now, which, ok := p.settledSum(ctx, id, dir, cur.UploadSum); ok && changedSince(cur.UploadSum, now) {
			// The scanner starts it over on its next walk (FilesChanged).
			p.log.Info(notReadyLog, "trace", id, "file", which)
			return
		}
	}
	ev := tracestate.Processed
	if msg != "" {
		ev = tracestate.ProcessFailed
	}
	t, saved, err := p.cfg.Store.UpdateTrace(ctx, id, func(t *cascade.Trace, found bool) error {
		to, ok := tracestate.Next(t.State, ev)
		if !found || !ok {
			return cascade.ErrUnchanged // no longer processing
		}
		if msg != "" {
			t.State, t.Error = to, &msg
			return nil
		}
		t.State, t.Error, t.KernelCount, t.UntracedKernels = to, nil, count, untraced
		t.Warnings = append(append(t.Warnings[:0:0], w.Result()...), pw...)
		t.Profiles = profiles
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
		p.log.Info("trace ready", "trace", id, "kernels", t.KernelCount, "untraced", t.UntracedKernels)
	}
	p.cfg.Events.Publish(cascade.TraceUpdated{Trace: t})
	p.report(tracestate.Move{ID: id, To: t.State, By: ev, Ran: ran})
}

// report tells Run's Reporter of a committed move.
func (p *Processor) report(mv tracestate.Move) {
	if p.to != nil {
		p.to.Moved(mv)
	}
}

// markUntraced marks the kernels of b that kernelslist.g names no kernel
// trace of (tracedir.Traced.Mark) and returns how many. A trace taken
// with the tracer's DYNAMIC_KERNEL_LIMIT ranges lists every launch in its
// stats files and traces those of its ranges only: it is ready with
// every launch, the others untraced (Trace.UntracedKernels counts them);
// its kernel count stays the kernel lines of kernelslist.g.
func markUntraced(t *tracedir.Traced, b []cascade.Kernel) int {
	n := 0
	for i := range b {
		if t.Mark(&b[i]) {
			n++
		}
	}
	return n
}
