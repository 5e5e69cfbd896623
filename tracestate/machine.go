package tracestate

import (
	"sync"

	"github.com/cascade-sim/cascade"
)

// Processor is the post-processor as the Machine drives it;
// *postproc.Processor is one. Its methods must not block.
type Processor interface {
	// Process queues a trace that reached PROCESSING.
	Process(id string)
	// Stop ends the post-processing of a trace that left PROCESSING
	// otherwise than by the post-processor's outcome.
	Stop(id string)
	// Retried says a user retried the trace: it may need processing
	// again even with its processed files in place.
	Retried(id string)
	// ReadProfiles reads a ready trace's hardware profiles again
	// (ProfilesChanged), leaving it READY.
	ReadProfiles(id string)
}

// A Move is one committed change of a trace's state, as its reporter
// tells the Machine: the state the trace is in now, and the event that
// moved it there (Next(from, By) gave To). A ProfilesChanged move moves
// nothing: To is the state the trace stays in.
type Move struct {
	ID string
	To cascade.TraceState
	By Event
	// Ran says a post-processor ran for the trace (By is Processed or
	// ProcessFailed), and so may have changed its files; false when the
	// trace moved on from the files its upload brought.
	Ran bool
}

// An Outcome is what the post-processor did with a trace, kept for the
// scanner: the state it moved the trace to, and whether it ran.
type Outcome struct {
	State cascade.TraceState
	Ran   bool
}

// Machine is told of every move of a trace's state and does what it
// calls for (see the package documentation). Its methods are safe for
// concurrent use.
type Machine struct {
	proc Processor

	mu       sync.Mutex
	outcomes map[string]Outcome
	ready    chan struct{}
}

// New returns a Machine that drives the post-processor p; p may be nil
// (no post-processing: a scanner alone).
func New(p Processor) *Machine {
	return &Machine{proc: p, outcomes: map[string]Outcome{}, ready: make(chan struct{}, 1)}
}

// Moved is told of a move once it is committed. A move the scanner
// reported starts the post-processor (To PROCESSING), stops it (To
// FAILED, or started over for changed files), tells it of a retry, or
// has it read a ready trace's profiles again (ProfilesChanged); a move
// the post-processor reported is kept until the scanner takes it
// (TakeOutcomes).
func (m *Machine) Moved(mv Move) {
	if !mv.By.ByScanner() {
		m.mu.Lock()
		// One that ran and one that did not, both untaken: the files
		// may have changed.
		m.outcomes[mv.ID] = Outcome{State: mv.To, Ran: mv.Ran || m.outcomes[mv.ID].Ran}
		m.mu.Unlock()
		select {
		case m.ready <- struct{}{}:
		default:
		}
		return
	}
	if m.proc == nil {
		return
	}
	switch {
	case mv.By == ProfilesChanged:
		if mv.To == cascade.TraceReady {
			m.proc.ReadProfiles(mv.ID)
		}
	case mv.By == Retried:
		m.proc.Retried(mv.ID)
	case mv.To == cascade.TraceFailed, mv.By == FilesChanged:
		m.proc.Stop(mv.ID) // it may have been processing
	case mv.To == cascade.TraceProcessing:
		m.proc.Process(mv.ID)
	}
}

// Outcomes receives a value when the post-processor moved a trace on
// since the last TakeOutcomes.
func (m *Machine) Outcomes() <-chan struct{} { return m.ready }

// TakeOutcomes returns the post-processor's moves since the last call, by
// trace id: the latest state of each trace, and whether a
// post-processor ran for it in any of them.
func (m *Machine) TakeOutcomes() map[string]Outcome {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.outcomes) == 0 {
		return nil
	}
	o := m.outcomes
	m.outcomes = map[string]Outcome{}
	return o
}
