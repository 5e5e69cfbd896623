// Package runs simulates ready traces with Accel-Sim and turns what the
// simulator prints into results.
//
// A [Manager] owns runs: [Manager.Launch] checks a request and queues a
// run ([Manager.NewRun] and [Manager.Enqueue] do the same for runs a
// caller stores itself, many at once), a follower parses the log as it
// grows and records progress and per-kernel results, and
// [Manager.Results] joins those with the trace's measured timing and step
// timeline. The Manager's [Executor] decides where runs execute: [Local]
// runs at most Concurrency simulators at once as children of the server
// (a restarted server runs what was running again from the beginning);
// [*Slurm] submits each run as a batch job, polls every job with one
// squeue call per interval, follows each job's log on the shared
// filesystem, and after a restart reattaches to the jobs by their stored
// ids (slurmexec.go). Both take queued runs from one
// internal/workqueue. Run rows are the truth. Every change is committed
// first and published after, as a copy of the committed row. When a
// trace's directory leaves the bucket, [Manager.RemoveTrace] stops its
// simulators (or cancels its jobs) and deletes its runs, publishing a
// removal for each.
//
// Accel-Sim's own formats are read under accelsim/: the simulator's log by
// accelsim/simlog, kernel lists by accelsim/kernellist, configs by
// accelsim/simconfig; the trace's timing files by tracedir. The projection
// files here (comparison.go, steps.go) are pure: they never touch the
// database, events or the GraphQL layer.
package runs
