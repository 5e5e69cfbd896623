// Package runs simulates ready traces with Accel-Sim and turns what the
// simulator prints into results.
//
// A [Manager] owns runs: [Manager.Launch] checks a request and queues a
// run, workers execute at most Concurrency at once through an [Executor]
// ([Local] here; a Slurm executor would submit to a cluster), a follower
// parses the log as it grows and records progress and per-kernel results,
// and [Manager.Results] joins those with the trace's measured timing and
// step timeline. Run rows are the truth: a restarted server requeues what
// was running and runs it again from the beginning. Every change is
// committed first and published after, as a copy of the committed row.
// When a trace's directory leaves the bucket, [Manager.RemoveTrace] stops
// its simulators and deletes its runs, publishing a removal for each.
//
// Accel-Sim's own formats are read under accelsim/: the simulator's log by
// accelsim/simlog, kernel lists by accelsim/kernellist, configs by
// accelsim/simconfig; the trace's timing files by tracedir. The projection
// files here (comparison.go, steps.go) are pure: they never touch the
// database, events or the GraphQL layer.
package runs
