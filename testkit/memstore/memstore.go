// Package memstore is an in-memory store of traces and their kernels, for
// the fast tests of the packages that keep traces through a Store
// interface of their own: scanner.Store and postproc.Store (their test
// files check that *Store implements them). It keeps the rules of
// *db.DB's trace methods that those packages rely on, and
// db/contract_test.go runs the same steps on both to keep it so:
//
//   - a read-modify-write (UpdateTrace, UpdateTraceAndKernels, each write
//     of UpdateTraces) gives fn found == false and a Trace with only its
//     ID when there is none, and saving it inserts it with the next Seq;
//     fn returning cascade.ErrUnchanged leaves the trace as it was and
//     reports saved == false and no error; another error is returned (by
//     UpdateTraces, in that write's TraceWritten.Err) and saves nothing;
//   - Seq and CreatedAt never change once a trace is stored, and
//     UpdatedAt only grows;
//   - dropKernels, or a TraceWrite's Kernels, replace the trace's kernels
//     in the same write; ReplaceKernelsFrom replaces them whole or not at
//     all, and a trace gone by its end gets none;
//   - MoveTrace fails with NOT_FOUND and CONFLICT as the database does,
//     and the trace keeps its Seq;
//   - everything read is a copy: a caller that changes it changes nothing
//     stored.
//
// Writes take turns, as the database's writer does; fn runs with the
// store locked and must not call it. Fail injects a database error.
//
// It imports nothing of Cascade but the root package, so that a
// package's internal tests (package scanner) can use it.
package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
)

// Store is the in-memory store. The zero value is ready to use.
type Store struct {
	// Fail, when set, is asked before each write with the method's name
	// ("UpdateTrace", "UpdateTraceAndKernels", "UpdateTraces",
	// "MoveTrace", "DeleteTrace", "ReplaceKernelsFrom", "SaveTrace") and
	// the trace's id (MoveTrace's from; each write's, for UpdateTraces):
	// an error it returns fails the write, which changes nothing, as a
	// database error would. Set it before the store is shared.
	Fail func(op, id string) error

	mu      sync.Mutex
	traces  map[string]cascade.Trace
	kernels map[string][]cascade.Kernel
	// counters are the traces' kernel counters, by trace id.
	counters map[string][]cascade.KernelCounter
	writes   map[string]int // committed writes per trace id
}

// New returns an empty store.
func New() *Store { return &Store{} }

func (s *Store) init() {
	if s.traces == nil {
		s.traces = map[string]cascade.Trace{}
		s.kernels = map[string][]cascade.Kernel{}
		s.counters = map[string][]cascade.KernelCounter{}
		s.writes = map[string]int{}
	}
}

func (s *Store) fail(op, id string) error {
	if s.Fail == nil {
		return nil
	}
	if err := s.Fail(op, id); err != nil {
		return fmt.Errorf("memstore: %s %s: %w", op, id, err)
	}
	return nil
}

// clone copies t deeply: its slices and the values its pointers point to.
func clone(t cascade.Trace) cascade.Trace {
	t.Prompts, t.Warnings, t.ScanWarnings = slices.Clone(t.Prompts), slices.Clone(t.Warnings), slices.Clone(t.ScanWarnings)
	t.Profiles = slices.Clone(t.Profiles)
	for i := range t.Profiles {
		t.Profiles[i].Stats = slices.Clone(t.Profiles[i].Stats)
	}
	for _, p := range []**string{&t.Error, &t.Model, &t.Layers, &t.SourceGPU, &t.SuggestedSimConfig} {
		if *p != nil {
			*p = cascade.Ptr(**p)
		}
	}
	return t
}

func cloneKernels(ks []cascade.Kernel) []cascade.Kernel {
	out := slices.Clone(ks)
	for i := range out {
		if out[i].Context != nil {
			out[i].Context = cascade.Ptr(*out[i].Context)
		}
		if out[i].Instructions != nil {
			out[i].Instructions = cascade.Ptr(*out[i].Instructions)
		}
	}
	return out
}

// changedAt is db's: now, or just after prev when the clock is behind it.
func changedAt(now, prev time.Time) time.Time {
	if now.After(prev) {
		return now
	}
	return prev.Add(time.Microsecond)
}

// save stores t, which fn changed, as the trace with its id: found says
// whether it was stored before (seq and created are what it had then).
// The caller holds s.mu.
func (s *Store) save(t *cascade.Trace, found bool, seq int64, created time.Time) {
	now := time.Now()
	if found {
		t.Seq, t.CreatedAt, t.UpdatedAt = seq, created, changedAt(now, t.UpdatedAt)
	} else {
		t.Seq, t.CreatedAt, t.UpdatedAt = s.nextSeq(), now, now
	}
	s.traces[t.ID] = clone(*t)
	s.writes[t.ID]++
}

// nextSeq is the Seq of a trace inserted now: one past the highest
// stored, as the database numbers them. The caller holds s.mu.
func (s *Store) nextSeq() int64 {
	var last int64
	for _, t := range s.traces {
		last = max(last, t.Seq)
	}
	return last + 1
}

// setKernels makes ks (nil: none) the trace's kernels, numbering them in
// place as db does. The caller holds s.mu.
func (s *Store) setKernels(id string, ks []cascade.Kernel) {
	if len(ks) == 0 {
		delete(s.kernels, id)
		return
	}
	for i := range ks {
		ks[i].TraceID, ks[i].Seq = id, i
	}
	s.kernels[id] = cloneKernels(ks)
}

// SaveTrace inserts t, or updates every field of the stored trace with its
// id, and fills in t's Seq and timestamps from the stored trace, as
// db.DB.SaveTrace does: tests seed the store with it.
func (s *Store) SaveTrace(_ context.Context, t *cascade.Trace) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if err := s.fail("SaveTrace", t.ID); err != nil {
		return err
	}
	old, found := s.traces[t.ID]
	if found {
		t.UpdatedAt = old.UpdatedAt
	}
	s.save(t, found, old.Seq, old.CreatedAt)
	return nil
}

// Trace returns the trace with the given id, or a NOT_FOUND error.
func (s *Store) Trace(_ context.Context, id string) (cascade.Trace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[id]
	if !ok {
		return cascade.Trace{}, cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", id)
	}
	return clone(t), nil
}

// AllTraces returns every trace, oldest (lowest Seq) first.
func (s *Store) AllTraces(context.Context) ([]cascade.Trace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := make([]cascade.Trace, 0, len(s.traces))
	for _, t := range s.traces {
		ts = append(ts, clone(t))
	}
	slices.SortFunc(ts, func(a, b cascade.Trace) int { return cmp.Compare(a.Seq, b.Seq) })
	return ts, nil
}

// UpdateTrace is UpdateTraceAndKernels for an fn that keeps the kernels.
func (s *Store) UpdateTrace(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) error) (cascade.Trace, bool, error) {
	return s.update(ctx, "UpdateTrace", id, func(t *cascade.Trace, found bool) (bool, error) { return false, fn(t, found) })
}

// UpdateTraceAndKernels reads the trace with the given id, lets fn change
// it, and saves it, its kernels dropped when fn says so; it returns the
// trace as saved, or as fn left it when nothing was saved.
func (s *Store) UpdateTraceAndKernels(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) (dropKernels bool, err error)) (cascade.Trace, bool, error) {
	return s.update(ctx, "UpdateTraceAndKernels", id, fn)
}

func (s *Store) update(_ context.Context, op, id string, fn func(t *cascade.Trace, found bool) (bool, error)) (cascade.Trace, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if err := s.fail(op, id); err != nil {
		return cascade.Trace{}, false, err
	}
	old, found := s.traces[id]
	t := cascade.Trace{ID: id}
	if found {
		t = clone(old)
	}
	drop, err := fn(&t, found)
	if errors.Is(err, cascade.ErrUnchanged) {
		return t, false, nil
	}
	if err != nil {
		return t, false, err
	}
	if drop {
		s.setKernels(id, nil)
	}
	s.save(&t, found, old.Seq, old.CreatedAt)
	return t, true, nil
}

// UpdateTraces applies the writes in order, all or (when Fail fails one)
// none of them: each as UpdateTraceAndKernels, its Kernels, when not nil,
// becoming the trace's kernels once it is saved. The ids must differ.
func (s *Store) UpdateTraces(_ context.Context, ws []cascade.TraceWrite) ([]cascade.TraceWritten, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	seen := map[string]bool{}
	for _, w := range ws {
		if seen[w.ID] {
			return nil, fmt.Errorf("update traces: trace %s written twice", w.ID)
		}
		seen[w.ID] = true
		if err := s.fail("UpdateTraces", w.ID); err != nil {
			return nil, err
		}
	}
	res := make([]cascade.TraceWritten, len(ws))
	for i, w := range ws {
		old, found := s.traces[w.ID]
		t := cascade.Trace{ID: w.ID}
		if found {
			t = clone(old)
		}
		drop, err := w.Update(&t, found)
		if errors.Is(err, cascade.ErrUnchanged) {
			res[i].Trace = t
			continue
		} else if err != nil {
			res[i] = cascade.TraceWritten{Trace: t, Err: err}
			continue
		}
		if drop || w.Kernels != nil {
			s.setKernels(w.ID, w.Kernels)
		}
		s.save(&t, found, old.Seq, old.CreatedAt)
		res[i] = cascade.TraceWritten{Trace: t, Saved: true}
	}
	return res, nil
}

// MoveTrace gives the trace from, with its kernels, the id to, and lets fn
// change it: NOT_FOUND when there is no trace from, CONFLICT when to is
// taken; an error of fn changes nothing and is returned.
func (s *Store) MoveTrace(_ context.Context, from, to string, fn func(t *cascade.Trace) error) (cascade.Trace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if err := s.fail("MoveTrace", from); err != nil {
		return cascade.Trace{}, err
	}
	old, ok := s.traces[from]
	if !ok {
		return cascade.Trace{}, cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", from)
	}
	if _, taken := s.traces[to]; taken {
		return cascade.Trace{}, cascade.Errorf(cascade.ECONFLICT, "trace %q exists", to)
	}
	t := clone(old)
	if err := fn(&t); err != nil {
		return t, err
	}
	t.ID = to
	delete(s.traces, from)
	if ks, ok := s.kernels[from]; ok {
		delete(s.kernels, from)
		for i := range ks {
			ks[i].TraceID = to
		}
		s.kernels[to] = ks
	}
	if cs, ok := s.counters[from]; ok {
		delete(s.counters, from)
		for i := range cs {
			cs[i].TraceID = to
		}
		s.counters[to] = cs
	}
	s.save(&t, true, old.Seq, old.CreatedAt)
	return t, nil
}

// DeleteTrace removes the trace and its kernels; a trace that is not there
// is no error.
func (s *Store) DeleteTrace(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if err := s.fail("DeleteTrace", id); err != nil {
		return err
	}
	delete(s.traces, id)
	delete(s.kernels, id)
	delete(s.counters, id)
	return nil
}

// ReplaceKernelCounters replaces the hardware counters of the trace's
// kernels.
func (s *Store) ReplaceKernelCounters(_ context.Context, traceID string, cs []cascade.KernelCounter) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if err := s.fail("ReplaceKernelCounters", traceID); err != nil {
		return err
	}
	cs = slices.Clone(cs)
	for i := range cs {
		cs[i].TraceID = traceID
	}
	s.counters[traceID] = cs
	return nil
}

// KernelCounters returns the counters of the trace's kernels whose seq
// is in [from, to), by seq, then statistic name.
func (s *Store) KernelCounters(_ context.Context, traceID string, from, to int) ([]cascade.KernelCounter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []cascade.KernelCounter
	for _, c := range s.counters[traceID] {
		if c.Seq >= from && c.Seq < to {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b cascade.KernelCounter) int {
		if a.Seq != b.Seq {
			return a.Seq - b.Seq
		}
		return strings.Compare(a.Stat, b.Stat)
	})
	return out, nil
}

// ReplaceKernels replaces the kernels of the trace with the given id.
func (s *Store) ReplaceKernels(ctx context.Context, traceID string, ks []cascade.Kernel) error {
	return s.ReplaceKernelsFrom(ctx, traceID, func(add func([]cascade.Kernel) error) error {
		if len(ks) == 0 {
			return nil
		}
		return add(ks)
	})
}

// ReplaceKernelsFrom replaces the trace's kernels with those fill adds
// (copied: add's batch may be reused), once fill returned without error;
// an error of fill, or of Fail, leaves them as they were. fill runs with
// the store unlocked, as the database writes a long list in chunks.
func (s *Store) ReplaceKernelsFrom(_ context.Context, traceID string, fill func(add func([]cascade.Kernel) error) error) error {
	var ks []cascade.Kernel
	if err := fill(func(b []cascade.Kernel) error {
		ks = append(ks, cloneKernels(b)...)
		return nil
	}); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if err := s.fail("ReplaceKernelsFrom", traceID); err != nil {
		return err
	}
	if _, ok := s.traces[traceID]; !ok {
		return nil // gone meanwhile: no kernels, no error
	}
	s.setKernels(traceID, ks)
	return nil
}

// Kernels returns a copy of the trace's kernels, in list order (by Seq).
func (s *Store) Kernels(traceID string) []cascade.Kernel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneKernels(s.kernels[traceID])
}

// KernelRange returns the trace's kernels whose seq is in [from, to),
// in list order.
func (s *Store) KernelRange(_ context.Context, traceID string, from, to int) ([]cascade.Kernel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []cascade.Kernel
	for _, k := range s.kernels[traceID] {
		if k.Seq >= from && k.Seq < to {
			out = append(out, k)
		}
	}
	return cloneKernels(out), nil
}

// Writes is how many writes of the trace with the given id were
// committed (inserts and saved updates; not those fn left unchanged).
func (s *Store) Writes(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[id]
}

// IDs returns the ids of the stored traces, sorted.
func (s *Store) IDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.traces))
}
