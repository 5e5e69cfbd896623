// Package runs simulates ready traces with Accel-Sim and turns what the
// simulator prints into results.
//
// A [Manager] owns runs and their rows: [Manager.Launch] checks a request
// and queues a run ([Manager.NewRun] and [Manager.Enqueue] do the same for
// runs a caller stores itself, many at once; [Manager.LaunchSweep] for a
// sweep's), its queue hands queued runs in launch order to its
// [Executor], each with its [Job] prepared (manager.go, launch.go,
// work.go), it cancels and removes runs (cancel.go), and
// [Manager.Results] joins a run's per-kernel results with the trace's
// measured timing and step timeline. Run rows are the truth. Every change
// is committed first and published after, as a copy of the committed row.
//
// Where a job executes is its Executor's: it starts jobs, cancels them,
// reattaches after a restart to what survived it, and reports its health
// ([Executor] says what each method guarantees). It records what becomes
// of a run only through the narrow [Host] the Manager gives it (host.go:
// change runs, follow a job's log, finish a run with its parsed log,
// queue runs again, publish its health), never the Manager itself; the
// Manager never asks which executor it has. The executors are
// runs/local (the simulator as the server's child) and runs/slurmexec (a
// Slurm batch job each); they import this package, never the reverse, and
// app picks one.
//
// It never touches the database or the event broker but through [Store]
// and [cascade.Publisher] (it imports neither db nor events), nor the
// GraphQL layer, nor Slurm. Accel-Sim's own formats are read under
// accelsim/: the simulator's log by accelsim/simlog, kernel lists by
// accelsim/kernellist, configs by accelsim/simconfig; the trace's timing
// files by tracedir. The projection files here (comparison.go, steps.go)
// are pure.
package runs
