package cascade

// Event is a committed change, as published to subscribers. Events with
// the same Key supersede each other: each is a full snapshot, so a
// subscriber that lags far behind can keep only the newest of each key and
// lose nothing it needs.
type Event interface{ Key() string }

// Publisher takes committed changes to whoever listens. Whoever commits a
// change publishes it, after the commit returned nil, with a value copy of
// the committed row. Publish never blocks; package events implements it.
type Publisher interface{ Publish(Event) }

// TraceUpdated carries the committed state of a trace.
type TraceUpdated struct{ Trace Trace }

// Key implements [Event].
func (e TraceUpdated) Key() string { return "trace/" + e.Trace.ID }

// TraceRemoved says the trace with the given id is gone.
type TraceRemoved struct{ ID string }

// Key implements [Event]; a removal supersedes the trace's updates.
func (e TraceRemoved) Key() string { return "trace/" + e.ID }

// LogGrew nudges tailers of a log: Kind ("postprocess", "run") and ID name
// the log. The lines themselves are read from the file, from an offset.
type LogGrew struct{ Kind, ID string }

// Key implements [Event].
func (e LogGrew) Key() string { return "log/" + e.Kind + "/" + e.ID }

// RunUpdated carries the committed state of a run.
type RunUpdated struct{ Run Run }

// Key implements [Event].
func (e RunUpdated) Key() string { return "run/" + e.Run.ID }

// RunRemoved says the run with the given id, a run of the trace TraceID
// (and of the sweep SweepID, "" for a run launched on its own), is gone.
type RunRemoved struct{ ID, TraceID, SweepID string }

// Key implements [Event]; a removal supersedes the run's updates.
func (e RunRemoved) Key() string { return "run/" + e.ID }

// ExecutorUpdated carries the run executor's new status: the Slurm
// executor turning unhealthy when Slurm stops answering, and healthy again.
type ExecutorUpdated struct{ Status ExecutorStatus }

// Key implements [Event].
func (e ExecutorUpdated) Key() string { return "executor" }

// SimConfigsChecked says the simulator has been asked which configs it
// accepts and which binary versions it decodes: configs it refuses are
// unusable from now on, and traces it cannot decode not simulatable.
type SimConfigsChecked struct{}

// Key implements [Event].
func (SimConfigsChecked) Key() string { return "simconfigs" }
