package postproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/cascade-sim/cascade/tracestate"
)

// Traces that skip the post-processor (their upload brought
// kernelslist.g) are finished in batches: a start on a bucket of a
// thousand finished uploads reads their stats files a few at once and
// moves a hundred of them to ready in one transaction, kernels included,
// rather than in three transactions each. A trace with bigger stats files
// than smallStatsBytes, or more kernels than smallKernels, is finished on
// its own (finish), its kernels going in chunks that never hold the
// database's writer for long, and outside the batches, which it would
// hold up.

const (
	finishBatch     = 100
	smallStatsBytes = 2 << 20 // about 20,000 kernels
	smallKernels    = 50_000
)

// smallStats reports whether the stats files of the trace at dir are
// small enough for a batch: regular files (not a pipe, which may keep
// its reader waiting) of smallStatsBytes together at most. A trace whose
// files cannot be listed or read is, and the batch reports why.
func smallStats(dir string) bool {
	tree, err := tracedir.StatsTree(dir)
	if err != nil {
		return true
	}
	var n int64
	for _, rel := range tree.StatsFiles() {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		switch {
		case err != nil:
		case !fi.Mode().IsRegular():
			return false
		default:
			n += fi.Size()
		}
	}
	return n <= smallStatsBytes
}

// batcher holds the traces waiting to be finished in a batch. Its
// goroutine (runBatches) takes them in the order they came.
type batcher struct {
	mu      sync.Mutex
	queue   []string
	waiting map[string]bool
	// busy holds the traces of the batch being finished, each with a
	// channel closed once the batch is over.
	busy map[string]chan struct{}
	kick chan struct{}
}

func newBatcher() *batcher {
	return &batcher{waiting: map[string]bool{}, busy: map[string]chan struct{}{}, kick: make(chan struct{}, 1)}
}

// add queues the trace for the next batch.
func (b *batcher) add(id string) {
	b.mu.Lock()
	if !b.waiting[id] {
		b.waiting[id] = true
		b.queue = append(b.queue, id)
	}
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// cancel takes the trace off the queue and returns the channel of the
// batch finishing it, nil when none is.
func (b *batcher) cancel(id string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.waiting, id) // take skips it
	return b.busy[id]
}

// take takes up to n queued traces as the next batch.
func (b *batcher) take(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for len(b.queue) > 0 && len(ids) < n {
		id := b.queue[0]
		b.queue = b.queue[1:]
		if !b.waiting[id] {
			continue // cancelled
		}
		delete(b.waiting, id)
		b.busy[id] = make(chan struct{})
		ids = append(ids, id)
	}
	return ids
}

// done ends a batch taken.
func (b *batcher) done(ids []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		close(b.busy[id])
		delete(b.busy, id)
	}
}

// runBatches finishes queued traces, a batch at a time, until ctx ends.
// Those still queued then stay processing, and the next start queues them
// again.
func (p *Processor) runBatches(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.batch.kick:
		}
		for ctx.Err() == nil {
			ids := p.batch.take(finishBatch)
			if len(ids) == 0 {
				break
			}
			p.finishBatch(ctx, ids)
			p.batch.done(ids)
		}
	}
}

// read is what finishing a trace read of its files.
type read struct {
	count    int              // kernelslist.g's kernel lines (the guide's kernel_count)
	untraced int              // launches kernelslist.g does not name (markUntraced)
	kernels  []cascade.Kernel // not nil when read
	w        tracedir.Warnings
	msg      string // why the trace fails; "" when it does not
	big      bool   // more than smallKernels: finish it on its own
	// profiles: metadata.json names hardware profiles, or the trace had
	// some read: finish it on its own, which reads them.
	profiles bool
	// sum is the data files' uploadSum now, which names the file to
	// blame when it is not the one the upload was complete with.
	sum, which string
	// writing: the S3 endpoint wrote a file of the trace during the walk
	// sum is of: finish it on its own, which waits for the writes to end.
	writing bool
}

var errBig = errors.New("many kernels")

// readFinished reads what finish reads of a trace whose post-processing
// is over: its kernelslist.g's count and its stats files' kernels, up to
// smallKernels of them.
func (p *Processor) readFinished(id string) read {
	var r read
	dir := filepath.Join(p.cfg.Root, id)
	if m, err := tracedir.ReadMetadata(dir); err == nil && len(m.Profiles) > 0 {
		r.profiles = true
		return r
	}
	traced, err := tracedir.ReadTraced(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		r.msg = fmt.Sprintf("%s: %v", tracedir.KernelsListG, err)
		return r
	}
	r.count = traced.Lines
	start := time.Now()
	r.sum, r.which, _ = uploadSum(dir)
	r.writing = p.cfg.Writing != nil && p.cfg.Writing(id, start)
	tree, err := tracedir.StatsTree(dir)
	if err != nil {
		r.msg = err.Error()
		return r
	}
	ks := []cascade.Kernel{}
	err = tree.EachKernels(&r.w, 2000, func(b []cascade.Kernel) error {
		if len(ks)+len(b) > smallKernels {
			return errBig
		}
		r.untraced += markUntraced(traced, b)
		ks = append(ks, b...)
		return nil
	})
	switch {
	case errors.Is(err, errBig):
		r.big = true
	case err != nil:
		r.msg = err.Error()
	default:
		r.kernels = ks
		traced.Check(&r.w)
	}
	return r
}

// finishBatch does what finish does with msg "" for each of the traces,
// in one transaction: it reads their files, a few traces at once, moves
// those still processing to ready with their kernels (or to failed, when
// their stats cannot be read), and then publishes them in order.
func (p *Processor) finishBatch(ctx context.Context, ids []string) {
	reads := make([]read, len(ids))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(ids), max(2, runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			for i := range next {
				reads[i] = p.readFinished(ids[i])
			}
		})
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()

	var ws []cascade.TraceWrite
	var in []int // ids index of each write
	for i, id := range ids {
		r := &reads[i]
		if r.big || r.profiles || r.writing { // many short rows, profiles to read, an upload: rare
			p.finish(ctx, id, filepath.Join(p.cfg.Root, id), "", false)
			continue
		}
		ev := tracestate.Processed
		if r.msg != "" {
			ev = tracestate.ProcessFailed
		}
		ws = append(ws, cascade.TraceWrite{ID: id, Kernels: r.kernels, Update: func(t *cascade.Trace, found bool) (bool, error) {
			to, ok := tracestate.Next(t.State, ev)
			if !found || !ok {
				return false, cascade.ErrUnchanged // failed by its metadata.json, or removed, meanwhile
			}
			if ev == tracestate.Processed && changedSince(t.UploadSum, r.sum) {
				p.log.Info(notReadyLog, "trace", id, "file", r.which)
				return false, cascade.ErrUnchanged // the scanner starts it over
			}
			if r.msg != "" {
				t.State, t.Error = to, &r.msg
				return false, nil
			}
			t.State, t.Error, t.KernelCount, t.UntracedKernels = to, nil, r.count, r.untraced
			t.Warnings = append(t.Warnings[:0:0], r.w.Result()...)
			if t.Warnings == nil {
				t.Warnings = []string{}
			}
			return false, nil
		}})
		in = append(in, i)
	}
	if len(ws) == 0 {
		return
	}
	res, err := p.cfg.Store.UpdateTraces(ctx, ws)
	if err != nil {
		if ctx.Err() == nil {
			// Each on its own, which logs what fails.
			p.log.Warn("save finished traces; saving them one by one", "traces", len(ws), "err", err)
			for _, i := range in {
				p.finish(ctx, ids[i], filepath.Join(p.cfg.Root, ids[i]), "", false)
			}
		}
		return
	}
	for j, r := range res {
		if !r.Saved {
			continue
		}
		t, id := r.Trace, ids[in[j]]
		ev := tracestate.Processed
		if t.State == cascade.TraceFailed {
			ev = tracestate.ProcessFailed
			p.log.Warn("trace failed", "trace", id, "error", cascade.Deref(t.Error))
		} else {
			p.log.Info("trace ready", "trace", id, "kernels", t.KernelCount)
		}
		p.cfg.Events.Publish(cascade.TraceUpdated{Trace: t})
		p.report(tracestate.Move{ID: id, To: t.State, By: ev})
	}
}
