package scanner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/cascade-sim/cascade/tracestate"
)

// DefaultInterval is the guide's scan period.
const DefaultInterval = 2 * time.Second

// Store is the storage the scanner needs; *db.DB implements it.
type Store interface {
	AllTraces(ctx context.Context) ([]cascade.Trace, error)
	UpdateTrace(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) error) (cascade.Trace, bool, error)
	UpdateTraceAndKernels(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) (bool, error)) (cascade.Trace, bool, error)
	MoveTrace(ctx context.Context, from, to string, fn func(t *cascade.Trace) error) (cascade.Trace, error)
	DeleteTrace(ctx context.Context, id string) error
	// UpdateTraces is many UpdateTraceAndKernels in one transaction.
	UpdateTraces(ctx context.Context, ws []cascade.TraceWrite) ([]cascade.TraceWritten, error)
}

// Config configures a Scanner.
type Config struct {
	Root     string        // the bucket prefix directory; the server creates it before Run
	Interval time.Duration // DefaultInterval when 0
	Store    Store
	Events   cascade.Publisher
	// States is told of every move the scanner commits, and tells it of
	// the post-processor's (see package tracestate); nil for a scanner
	// alone, whose complete uploads stay processing.
	States *tracestate.Machine
	// Removing, if set, is called before a trace whose directory left
	// the bucket is deleted: what works on its files (its post-processor)
	// stops there, and may be waited for, so that a trace gone from the
	// store has nothing left running on it. Removed, if set, is called
	// after the deletion (no run can be launched on the trace then),
	// before traceRemoved is published: the runs of the trace end there.
	// After an error of either the next periodic scan removes the trace
	// again.
	Removing, Removed func(ctx context.Context, id string) error
	// Scanned, if set, is told how long each periodic pass took (the
	// first, full one included), for /metrics.
	Scanned func(time.Duration)
	// Writing, if set, reports whether the S3 endpoint is writing a file
	// of the trace (a multipart upload open counts), or a write of one
	// began or ended at or after since, when a walk of it began: an
	// upload without a files list is not complete meanwhile, however
	// quiet its tree, and a walk during a write may have seen it half done.
	Writing func(id string, since time.Time) bool
	// Arriving, if set, gives the bytes that have arrived through the S3
	// endpoint of each file of the trace being uploaded and not yet in
	// place (by slash path in the trace's folder): an uploading trace's
	// bytes and kernelCount count them, so that they grow while a large
	// file streams in, not when it is complete.
	Arriving func(id string) map[string]int64
	Logger   *slog.Logger
}

// Scanner watches the bucket. Run it once; Kick and Rescan are safe for
// concurrent use.
type Scanner struct {
	cfg      Config
	log      *slog.Logger
	interval time.Duration

	kick chan struct{}

	mu     sync.Mutex
	dirty  map[string]bool // trace ids fsnotify saw change
	forced map[string]bool // trace ids to walk whatever state the scanner last saw
	all    bool            // rescan everything in full (overflow, Rescan)

	// Owned by the Run goroutine.
	traces   map[string]*entry
	watching bool // file-system events arrive
	// notTraces are the names of files directly under the prefix already
	// logged (notTrace).
	notTraces map[string]bool
	// watchGaps: some directory is not watched (the kernel's limit); its
	// events never arrive. Set by the watcher.
	watchGaps atomic.Bool
}

// entry is what the scanner remembers of a trace between scans.
type entry struct {
	history // of its walks, for inspect
	state   cascade.TraceState
	dirs    []string // directories seen by the last walk
	dirSig  string   // tracedir.DirSignature after the last walk

	walkedAt time.Time     // when the last walk started
	walkCost time.Duration // how long it took
	deferred bool          // a kick for this trace is already scheduled
	// missed: a file-system event for the trace went by without a walk
	// while it was processing.
	missed bool
	// writing: the last walk found the S3 endpoint writing a file of the
	// trace. What the writes do is decided once they end (a ready trace's
	// data files written again, see look.apply), so the trace is walked
	// on every periodic pass until then, events or not.
	writing bool
}

// walkShare bounds the scanner's time on one busy trace: after a walk that
// took d, file-system events wait until walkShare×d has passed before the
// next walk. Small traces (a walk of a few ms) are not held back; a trace
// of a hundred thousand files streaming in does not keep a core busy.
const walkShare = 4

// New returns a Scanner; call Run to start it.
func New(cfg Config) *Scanner {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Scanner{
		cfg:      cfg,
		log:      log.With("component", "scanner"),
		interval: cfg.Interval,
		kick:     make(chan struct{}, 1),
		dirty:    map[string]bool{},
		forced:   map[string]bool{},
		traces:   map[string]*entry{},
	}
}

// Kick asks for an immediate scan of the given trace.
func (s *Scanner) Kick(id string) {
	s.mu.Lock()
	s.dirty[id] = true
	s.mu.Unlock()
	s.wake()
}

// Rescan asks for an immediate full scan of every trace.
func (s *Scanner) Rescan() {
	s.mu.Lock()
	s.all = true
	s.mu.Unlock()
	s.wake()
}

func (s *Scanner) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run scans until ctx is done. It first reconciles the database with the
// disk: traces gone from disk are removed, every other one rescanned. It
// never creates the bucket directory: the server does, before it is
// ready, and one gone later is the operator's to bring back (/healthz
// says so), not Run's to replace with an empty one at whatever moment it
// starts.
func (s *Scanner) Run(ctx context.Context) error {
	known, err := s.cfg.Store.AllTraces(ctx)
	if err != nil {
		return fmt.Errorf("load traces: %w", err)
	}
	for _, t := range known {
		if !t.Sample {
			s.traces[t.ID] = &entry{state: t.State}
		}
	}
	w, err := newWatcher(s)
	if err != nil {
		s.log.Warn("no file-system events; scanning every interval only", "err", err)
	} else {
		s.watching = true
		defer w.Close()
	}
	s.scan(ctx, true, true)
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	var outcomes <-chan struct{} // nil without States: never ready
	if s.cfg.States != nil {
		outcomes = s.cfg.States.Outcomes()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			s.scan(ctx, true, false)
		case <-s.kick:
			s.scan(ctx, false, false)
		case <-outcomes:
			s.scan(ctx, false, false)
		}
	}
}

// scan runs one pass. A periodic pass lists the bucket, removes traces that
// are gone, walks new and uploading traces, and stats the directories of
// the others; any pass walks the traces fsnotify marked dirty.
func (s *Scanner) scan(ctx context.Context, periodic, full bool) {
	s.mu.Lock()
	dirty, forced, all := s.dirty, s.forced, s.all
	s.dirty, s.forced, s.all = map[string]bool{}, map[string]bool{}, false
	s.mu.Unlock()
	s.settle(forced)
	for id := range forced {
		dirty[id] = true
	}
	full = full || all
	now := time.Now()

	if periodic || full {
		present, err := s.listTraces()
		if err != nil {
			s.log.Error("list bucket", "path", s.cfg.Root, "err", err)
			return
		}
		for id := range s.traces {
			if !present[id] {
				s.remove(ctx, id)
			}
		}
		var walk []string
		for id := range present {
			e := s.traces[id]
			switch {
			case e == nil || full || dirty[id] || e.state == cascade.TraceUploading || e.writing || e.missed:
				walk = append(walk, id)
			case tracedir.DirSignature(s.dir(id), e.dirs, tracedir.MetadataFile) != e.dirSig:
				walk = append(walk, id)
			}
		}
		slices.Sort(walk) // new traces are stored in name order
		s.scanTraces(ctx, walk, now)
		if s.cfg.Scanned != nil {
			s.cfg.Scanned(time.Since(now))
		}
		return
	}
	for id := range dirty {
		if ctx.Err() != nil {
			return
		}
		if _, err := os.Lstat(s.dir(id)); errors.Is(err, fs.ErrNotExist) {
			if _, known := s.traces[id]; known {
				s.remove(ctx, id)
			}
			continue
		}
		if e := s.traces[id]; e != nil && !forced[id] {
			if wait := walkShare*e.walkCost - now.Sub(e.walkedAt); wait > 0 {
				if !e.deferred {
					e.deferred = true
					time.AfterFunc(wait, func() { s.Kick(id) })
				}
				continue
			}
		}
		// The post-processor is writing: the periodic pass catches up. It
		// tells the scanner (Refresh) when it is done, and a retried trace
		// is forced too, so a stale state never hides a trace for long.
		// Only a new metadata.json, which may say the trace failed, is
		// read at once.
		if e := s.traces[id]; e != nil && e.state == cascade.TraceProcessing && !forced[id] && metaSig(s.dir(id)) == e.metaSig {
			e.missed = true
			continue
		}
		s.scanTrace(ctx, id, now)
	}
}

// unchanged reports whether the trace's files are, as far as the scanner
// can tell without walking, those of its last walk (see Moved).
func (s *Scanner) unchanged(id string, e *entry) bool {
	if !s.watching || s.watchGaps.Load() || e.missed || e.dirSig == "" {
		return false
	}
	dir := s.dir(id)
	return metaSig(dir) == e.metaSig && tracedir.DirSignature(dir, e.dirs, tracedir.MetadataFile) == e.dirSig
}

func (s *Scanner) dir(id string) string { return filepath.Join(s.cfg.Root, id) }

// scanTrace walks one trace, decides its state, and commits and publishes
// what changed.
func (s *Scanner) scanTrace(ctx context.Context, id string, now time.Time) {
	e, l, ok := s.inspectWalk(ctx, walkTrace(s.dir(id), id), now)
	if !ok {
		return
	}
	committed, c, ok := s.commit(ctx, id, e, l)
	s.committed(ctx, id, e, l, committed, c, ok)
}

// A walked is what walkTrace read of one trace, for inspectWalk.
type walked struct {
	id     string
	start  time.Time     // when the walk started
	cost   time.Duration // how long the walk of the tree took
	tree   *tracedir.Tree
	err    error
	saw    sight
	dirs   []string
	dirSig string
}

// walkTrace reads a trace's directory. It touches nothing of the
// scanner's, so that many run at once.
func walkTrace(dir, id string) walked {
	w := walked{id: id, start: time.Now()}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		// A file (or link) directly under the prefix: no trace, as
		// listTraces has it.
		w.err = errNotADir
		return w
	}
	w.tree, w.err = tracedir.Walk(dir)
	w.cost = time.Since(w.start)
	if w.err != nil {
		return w
	}
	w.saw = see(w.tree)
	w.dirs = w.tree.SortedDirs()
	w.dirSig = tracedir.DirSignature(dir, w.dirs, tracedir.MetadataFile)
	return w
}

// inspectWalk decides what a walk of a trace says, and records it in the
// trace's entry. It reports false when there is nothing to commit: the
// walk failed, or the trace is gone (it is then removed).
func (s *Scanner) inspectWalk(ctx context.Context, w walked, now time.Time) (*entry, look, bool) {
	id := w.id
	if w.err != nil {
		if errors.Is(w.err, fs.ErrNotExist) || errors.Is(w.err, errNotADir) {
			// Gone, or a file where it was: a trace is a directory.
			if _, known := s.traces[id]; known {
				s.remove(ctx, id)
			} else if errors.Is(w.err, errNotADir) {
				s.notTrace(id)
			}
			return nil, look{}, false
		}
		s.log.Warn("walk trace", "trace", id, "err", w.err)
		return nil, look{}, false
	}
	e := s.traces[id]
	if e == nil {
		e = &entry{}
	}
	if s.cfg.Writing != nil {
		w.saw.writing = s.cfg.Writing(id, w.start)
	}
	if s.cfg.Arriving != nil && w.saw.writing {
		w.saw.arriving = s.cfg.Arriving(id)
	}
	l, h := inspect(w.saw, e.history, now, s.interval)
	if l.gone {
		if _, known := s.traces[id]; known {
			s.remove(ctx, id)
		}
		return nil, look{}, false
	}
	e.history = h
	l.knew = e.state
	e.walkedAt, e.walkCost, e.deferred, e.missed = w.start, w.cost, false, false
	e.writing = w.saw.writing
	e.dirs, e.dirSig = w.dirs, w.dirSig
	return e, l, true
}

// committed finishes the scan of a trace whose look commit applied: an
// upload that started over is committed once more, and a trace that moved
// is logged and its move reported to Config.States, which hands it to the
// post-processor or takes it from it.
func (s *Scanner) committed(ctx context.Context, id string, e *entry, l look, t cascade.Trace, c change, ok bool) {
	if ok && c == startedOver {
		s.report(tracestate.Move{ID: id, To: t.State, By: tracestate.FilesChanged})
		// Published as uploading first, then the guide's rules: an upload
		// that is already complete moves on at once.
		t, c, ok = s.commit(ctx, id, e, l)
	}
	if ok && c == reprofiled {
		// apply found it READY in the committing transaction; it stays so.
		s.log.Info("trace profiles changed; reading them again", "trace", id)
		s.report(tracestate.Move{ID: id, To: cascade.TraceReady, By: tracestate.ProfilesChanged})
		return
	}
	if !ok || c != moved {
		return
	}
	if t.Error != nil {
		s.log.Warn("trace failed", "trace", id, "error", *t.Error)
	} else {
		s.log.Info("trace "+strings.ToLower(string(t.State)), "trace", id)
	}
	s.report(tracestate.Move{ID: id, To: t.State, By: l.event})
}

// scanBatch is how many traces a pass commits in one transaction.
const scanBatch = 100

// scanTraces scans the traces with the given ids, as scanTrace does each:
// several walks at once (a start on a bucket of a thousand traces), and
// their changes committed a batch of traces a transaction, each batch's
// events published in order once it is committed.
func (s *Scanner) scanTraces(ctx context.Context, ids []string, now time.Time) {
	if len(ids) <= 1 {
		for _, id := range ids {
			s.scanTrace(ctx, id, now)
		}
		return
	}
	walks := make([]walked, len(ids))
	done := make([]chan struct{}, len(ids))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(ids), max(2, runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				walks[i] = walkTrace(s.dir(ids[i]), ids[i])
				close(done[i])
			}
		})
	}
	defer func() {
		next.Store(int64(len(ids))) // the walkers stop
		wg.Wait()
	}()
	for from := 0; from < len(ids); from += scanBatch {
		batch := make([]pending, 0, scanBatch)
		for i := from; i < min(from+scanBatch, len(ids)); i++ {
			select {
			case <-done[i]:
			case <-ctx.Done():
				return
			}
			if e, l, ok := s.inspectWalk(ctx, walks[i], now); ok {
				batch = append(batch, pending{id: ids[i], e: e, l: l})
			}
			walks[i] = walked{} // its tree may be big
		}
		s.commitBatch(ctx, batch)
	}
}

// pending is a trace whose look waits for its batch's commit.
type pending struct {
	id string
	e  *entry
	l  look
	c  change
	// why is what update found (see commit).
	why string
}

// commitBatch commits the looks of many traces in one transaction and
// publishes what changed, in order. A trace the batch cannot take (the
// seeded sample's id) and every trace of a batch that failed are committed
// one by one.
func (s *Scanner) commitBatch(ctx context.Context, batch []pending) {
	ws := make([]cascade.TraceWrite, len(batch))
	for i := range batch {
		p := &batch[i]
		ws[i] = cascade.TraceWrite{ID: p.id, Update: update(p.l, &p.c, &p.why)}
	}
	res, err := s.cfg.Store.UpdateTraces(ctx, ws)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("save traces; saving them one by one", "traces", len(batch), "err", err)
	}
	for i, p := range batch {
		if err != nil || res[i].Err != nil {
			t, c, ok := s.commit(ctx, p.id, p.e, p.l)
			s.committed(ctx, p.id, p.e, p.l, t, c, ok)
			continue
		}
		t, c, ok := s.saved(p.id, p.e, p.l, res[i].Trace, res[i].Saved, p.c, p.why)
		s.committed(ctx, p.id, p.e, p.l, t, c, ok)
	}
}

// metaSig is the fileSig of the trace directory's metadata.json, "" when
// there is none.
func metaSig(dir string) string {
	fi, err := os.Lstat(filepath.Join(dir, tracedir.MetadataFile))
	if err != nil {
		return ""
	}
	return fileSig(fi.Size(), fi.ModTime())
}

// errSample stops a commit to the seeded sample's row.
var errSample = errors.New("scanner: the id is the seeded sample's")

// commit applies the look to the stored trace and, if that changed it,
// commits and publishes it. It reports what apply did to the state and
// whether a change was committed.
func (s *Scanner) commit(ctx context.Context, id string, e *entry, l look) (cascade.Trace, change, bool) {
	var c change
	var why string
	fn := update(l, &c, &why)
	committed, saved, err := s.cfg.Store.UpdateTraceAndKernels(ctx, id, fn)
	if errors.Is(err, errSample) && s.sampleAside(ctx, id) {
		committed, saved, err = s.cfg.Store.UpdateTraceAndKernels(ctx, id, fn)
	}
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, errSample) {
			s.log.Error("save trace", "trace", id, "err", err)
		}
		return committed, unchanged, false
	}
	return s.saved(id, e, l, committed, saved, c, why)
}

// update is the read-modify-write that applies the look l to the stored
// trace; it sets *c and *why to what apply did.
func update(l look, c *change, why *string) func(t *cascade.Trace, found bool) (bool, error) {
	return func(t *cascade.Trace, found bool) (bool, error) {
		if t.Sample {
			return false, errSample
		}
		if found && l.knew != "" && t.State != l.knew && t.State.Finished() {
			// Finished by the post-processor while the walk went on: a
			// walk that began before its kernelslist.g was written would
			// take the finished trace for one uploaded again.
			*c = stale
			return false, cascade.ErrUnchanged
		}
		before := *t
		before.Prompts, before.Warnings = slices.Clone(t.Prompts), slices.Clone(t.Warnings)
		if !found {
			t.State = cascade.TraceUploading
		}
		*c, *why = l.apply(t)
		if found && equalScan(before, *t) {
			return false, cascade.ErrUnchanged
		}
		// An upload that starts over has no kernel list until it is ready.
		return *c == startedOver, nil
	}
}

// saved records a committed look in the trace's entry and publishes the
// trace when it changed.
func (s *Scanner) saved(id string, e *entry, l look, committed cascade.Trace, saved bool, c change, why string) (cascade.Trace, change, bool) {
	e.state = committed.State
	e.kept(l, committed)
	s.traces[id] = e
	if c == stale {
		s.Refresh(id) // a walk that begins now knows the state it is judged against
		return committed, unchanged, false
	}
	if !saved {
		if c == reprofiled {
			// A profile file changed, which is none of the trace's
			// scan fields: nothing to publish, but its profiles are read.
			return committed, c, true
		}
		return committed, unchanged, false
	}
	if c == startedOver {
		s.log.Info("trace uploaded again; starting over", "trace", id, "why", why)
	}
	s.cfg.Events.Publish(cascade.TraceUpdated{Trace: committed})
	return committed, c, true
}
