package local

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"
)

// DefaultPeakRSS is the memory a simulation is taken to need when no
// recent run of its config recorded its peak: 2 GiB, more than Accel-Sim
// takes for the tested configs on traces of a few thousand kernels.
const DefaultPeakRSS int64 = 2 << 30

// memoryPoll is how often a simulation that waits for memory reads what
// is available again (other processes free some too), and whether its
// run still waits.
const memoryPoll = time.Second

// need is the memory set aside for a simulation whose config's recent
// runs peaked at peak bytes ([runs.Job.PeakRSS]): that and an eighth
// more, or DefaultPeakRSS when none recorded it.
func need(peak int64) int64 {
	if peak <= 0 {
		return DefaultPeakRSS
	}
	return peak + peak/8
}

// sim is a simulation of this executor's that runs, for fits: the memory
// set aside for it when it started, and what it holds now.
type sim struct{ reserved, resident int64 }

// fits reports whether a simulation needing need bytes may start beside
// the running ones, with available bytes available now. Each running one
// may yet grow to what was set aside for it: what it holds now is counted
// in available already, the rest of its reserve is taken off. A
// simulation always starts when none runs: one that needs more than the
// machine has is tried alone rather than held for ever.
func fits(need, available int64, running []sim) bool {
	if len(running) == 0 {
		return true
	}
	free := available
	for _, s := range running {
		free -= max(0, s.reserved-s.resident)
	}
	return need <= free
}

// slots is how many simulations run at once: concurrency when it is set
// (CASCADE_RUN_CONCURRENCY), else the CPUs this process may use.
func slots(concurrency, cpus int) int {
	if concurrency > 0 {
		return concurrency
	}
	if cpus <= 0 {
		cpus = runtime.GOMAXPROCS(0)
	}
	return max(1, cpus)
}

// gate holds a simulation back until the memory it needs is available
// beside the ones running (see fits).
type gate struct {
	read func() (Memory, error)
	log  *slog.Logger
	poll time.Duration // memoryPoll; shorter in tests

	mu      sync.Mutex
	running map[string]*admitted // by run id
	ended   chan struct{}        // closed, and replaced, when a simulation ends
	warned  bool                 // a failed read was logged
}

// admitted is a simulation the gate let start: what was set aside for it,
// and its process once started (0 before).
type admitted struct {
	reserved int64
	pid      int
}

func newGate(read func() (Memory, error), log *slog.Logger) *gate {
	return &gate{read: read, log: log, poll: memoryPoll, running: map[string]*admitted{}, ended: make(chan struct{})}
}

// admit waits until the run's simulation, needing need bytes, fits beside
// the running ones, and then counts it as running until done. It returns
// false, having counted nothing, when ctx ends or waiting (asked every
// poll) says the run waits no longer. Memory that cannot be read
// holds nothing back.
func (g *gate) admit(ctx context.Context, id string, need int64, waiting func() bool) bool {
	logged := false
	for {
		mem, err := g.read()
		g.mu.Lock()
		if err != nil && !g.warned {
			g.warned = true
			g.log.Warn("cannot read the memory available; simulations start without waiting for it", "err", err)
		}
		var rs []sim
		for _, a := range g.running {
			s := sim{reserved: a.reserved}
			if a.pid > 0 {
				s.resident = residentBytes(a.pid)
			}
			rs = append(rs, s)
		}
		if err != nil || fits(need, mem.Available, rs) {
			g.running[id] = &admitted{reserved: need}
			g.mu.Unlock()
			if logged {
				g.log.Info("run starts: the memory it needs is available", "run", id, "need_bytes", need, "available_bytes", mem.Available)
			}
			return true
		}
		ended := g.ended
		g.mu.Unlock()
		if !logged {
			logged = true
			g.log.Info("run waits for memory", "run", id, "need_bytes", need, "available_bytes", mem.Available, "from", mem.From, "running", len(rs))
		}
		select {
		case <-ctx.Done():
			return false
		case <-ended:
		case <-time.After(g.poll):
		}
		if !waiting() {
			return false
		}
	}
}

// started tells the gate the process of an admitted simulation.
func (g *gate) started(id string, pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if a := g.running[id]; a != nil {
		a.pid = pid
	}
}

// done forgets an admitted simulation, which has ended, and wakes those
// waiting.
func (g *gate) done(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.running, id)
	close(g.ended)
	g.ended = make(chan struct{})
}

// describe says how many simulations run at once, for the log at start
// and the executor's status.
func describe(concurrency, n int, mem Memory, err error) string {
	if concurrency > 0 {
		return fmt.Sprintf("simulations at once: %d (CASCADE_RUN_CONCURRENCY)", n)
	}
	s := fmt.Sprintf("simulations at once: up to %d (the CPUs), each started once the memory its config took lately fits in the memory available", n)
	if err != nil {
		return s + fmt.Sprintf(" (which cannot be read: %v; so CPUs alone)", err)
	}
	return s + fmt.Sprintf(" (%s now, %s; %s for a config no run recorded)", gib(mem.Available), mem.From, gib(DefaultPeakRSS))
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
