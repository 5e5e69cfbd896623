package results_test

import (
	"context"
	"strings"

	"github.com/cascade-sim/cascade"
)

// memStore is a sweep's rows in memory: the read side's Store, counting
// the kernel pages read.
type memStore struct {
	traces  map[string]cascade.Trace
	runs    []cascade.Run
	kernels map[string][]cascade.RunKernel
	sweep   cascade.Sweep
	pages   int
	// wholes counts the runs' kernels read whole (RunKernels), maxFirst
	// is the largest page asked for.
	wholes, maxFirst int
	// traceKernels and counters are traces' kernel lists and what their
	// profiles measured, by trace.
	traceKernels map[string][]cascade.Kernel
	counters     map[string][]cascade.KernelCounter
}

func (s *memStore) Trace(_ context.Context, id string) (cascade.Trace, error) {
	if t, ok := s.traces[id]; ok {
		return t, nil
	}
	return cascade.Trace{}, cascade.Errorf(cascade.ENOTFOUND, "no trace %s", id)
}

func (s *memStore) Run(_ context.Context, id string) (cascade.Run, error) {
	for _, r := range s.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return cascade.Run{}, cascade.Errorf(cascade.ENOTFOUND, "no run %s", id)
}

func (s *memStore) TraceRuns(_ context.Context, traceID string) ([]cascade.Run, error) {
	var out []cascade.Run
	for _, r := range s.runs {
		if r.TraceID == traceID {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *memStore) RunKernels(_ context.Context, runID string) ([]cascade.RunKernel, error) {
	s.wholes++
	return append([]cascade.RunKernel(nil), s.kernels[runID]...), nil
}

func (s *memStore) RunKernelPage(_ context.Context, runID string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error) {
	s.pages++
	s.maxFirst = max(s.maxFirst, p.First)
	after := -1
	if seq, ok, err := cascade.ParseCursor(p.After); err != nil {
		return cascade.PageOf[cascade.RunKernel]{}, err
	} else if ok {
		after = int(seq)
	}
	var out cascade.PageOf[cascade.RunKernel]
	for _, k := range s.kernels[runID] {
		if k.Seq <= after {
			continue
		}
		if len(out.Items) == p.First {
			out.HasNext = true
			break
		}
		out.Items = append(out.Items, k)
	}
	return out, nil
}

func (s *memStore) Sweep(_ context.Context, id string) (cascade.Sweep, error) {
	if id != s.sweep.ID {
		return cascade.Sweep{}, cascade.Errorf(cascade.ENOTFOUND, "no sweep %s", id)
	}
	return s.sweep, nil
}

func (s *memStore) SweepRuns(_ context.Context, _ string, _ ...cascade.RunState) ([]cascade.Run, error) {
	return append([]cascade.Run(nil), s.runs...), nil
}

func (s *memStore) Kernels(_ context.Context, traceID, search string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error) {
	after := -1
	if seq, ok, err := cascade.ParseCursor(p.After); err != nil {
		return cascade.PageOf[cascade.Kernel]{}, err
	} else if ok {
		after = int(seq)
	}
	var out cascade.PageOf[cascade.Kernel]
	for _, k := range s.traceKernels[traceID] {
		if k.Seq <= after || (search != "" && !strings.Contains(k.Name, search)) {
			continue
		}
		if len(out.Items) == p.First {
			out.HasNext = true
			break
		}
		out.Items = append(out.Items, k)
	}
	return out, nil
}

func (s *memStore) KernelCounters(_ context.Context, traceID string, from, to int) ([]cascade.KernelCounter, error) {
	var out []cascade.KernelCounter
	for _, c := range s.counters[traceID] {
		if c.Seq >= from && c.Seq < to {
			out = append(out, c)
		}
	}
	return out, nil
}
