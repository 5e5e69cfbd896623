// Package runs is the run lifecycle: it launches simulations of ready
// traces with Accel-Sim, queues them, hands them to an executor, follows
// them and records what the simulator printed.
//
// A [Manager] owns runs and their rows: [Manager.Launch] checks a request
// and queues a run ([Manager.LaunchRuns] launches many together, stored in
// one transaction; [Sweeps.LaunchSweep] a sweep's), its queue hands
// queued runs in launch order to its [Executor], each with its [Job]
// prepared (manager.go, launch.go, work.go), it records their progress,
// kernel results and end as the executor reports them (host.go, stats.go,
// saved.go), and it cancels and removes runs (cancel.go). It reuses a
// succeeded run whose simulation a launch would repeat (reuse.go, sums.go)
// and keeps, while a run runs here, the totals of its statistics
// ([Manager.LiveTotals]). The configs runs launch with, and what the
// simulator says of them, are its [Configs] (configs.go, probe.go); the
// runs' simulator logs are read through its [Logs] (logs.go), and its
// executor's health, slots and start-up check through its
// [ExecutorHandle] (exechandle.go). Run rows are the truth. Every change is
// committed first and published after, as a copy of the committed row.
//
// What a run gives back is read apart, by package results; sampled runs
// are coordinated apart, by package sampling/sampled, which the Manager
// tells of every change it publishes and leaves its own runs to
// ([Coordinator]); it drives its segments through LaunchRuns and
// CancelRuns like any caller.
//
// Where a job executes is its Executor's: it starts jobs, cancels them,
// reattaches after a restart to what survived it, and reports its health
// ([Executor] says what each method guarantees). It records what becomes
// of a run only through the narrow [Host] the Manager gives it (host.go:
// change runs, follow a job's log, finish a run with its parsed log,
// queue runs again, publish its health), never the Manager itself; the
// Manager never asks which executor it has, but for one thing: an
// [ArrayExecutor] is handed the queued segments of a sampled or split run
// together (arrays.go). The executors are runs/local (the simulator as
// the server's child) and runs/slurmexec (a Slurm batch job each, a job
// array for segments); they import this package, never the reverse, and
// app picks one.
//
// It never touches the database or the event broker but through [Store]
// and [cascade.Publisher] (it imports neither db nor events), nor the
// GraphQL layer, nor Slurm. Accel-Sim's own formats are read under
// accelsim/: the simulator's log by accelsim/simlog, kernel lists by
// accelsim/kernellist, configs by accelsim/simconfig.
package runs
