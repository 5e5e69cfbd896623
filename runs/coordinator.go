package runs

import (
	"context"

	"github.com/cascade-sim/cascade"
)

// A Coordinator owns the runs a Manager stores but never hands to its
// executor: sampled and split runs (Run.Coordinated), which follow runs
// of their own, their segments (package sampling/sampled). The Manager tells it of
// every run it publishes and leaves it its own runs' cancelling; the
// Coordinator drives the runs it coordinates through the Manager's
// exported API (LaunchRuns, CancelRuns). Give one with
// [Manager.Coordinate] before Run; without one, runs of that kind are
// left as they are.
type Coordinator interface {
	// Start is called once as the Manager starts running, with its
	// context (which ends as the server stops) and the coordinated runs
	// a previous server left unfinished.
	Start(ctx context.Context, unfinished []cascade.Run)
	// Changed is told of every change of a run the Manager publishes, as
	// it publishes it; it must not block, nor call back into the Manager
	// before returning.
	Changed(r cascade.Run)
	// Cancel cancels a run it coordinates, with what it coordinates; it
	// returns CONFLICT for a run that is over.
	Cancel(ctx context.Context, r cascade.Run) (cascade.Run, error)
	// Lock keeps it from writing its runs until unlock is called:
	// RemoveTrace holds it while it deletes a trace's runs, so that none
	// is written after its rows are gone.
	Lock() (unlock func())
	// Stop is called as the Manager's Run returns: it returns once no
	// work of the Coordinator's is under way.
	Stop()
}

// Coordinate makes c the Coordinator of the runs the Manager does not
// execute itself. Call it before Run.
func (m *Manager) Coordinate(c Coordinator) { m.coord = c }

// nobody coordinates when no Coordinator was given.
type nobody struct{}

func (nobody) Start(context.Context, []cascade.Run) {}
func (nobody) Changed(cascade.Run)                  {}
func (nobody) Lock() func()                         { return func() {} }
func (nobody) Stop()                                {}
func (nobody) Cancel(_ context.Context, r cascade.Run) (cascade.Run, error) {
	return r, cascade.Errorf(cascade.ECONFLICT, "run %q is a sampled run, and this server coordinates none", r.ID)
}
