// Package local is the local executor of runs ([runs.Executor]): each
// job's simulator runs as a child process of the server, in the job's
// directory and its own process group, at most Concurrency at once, its
// output written to the job's log (a full disk stops it and cuts the log
// to its end). With Concurrency 0 the machine sizes it (sizing.go): up to
// its CPUs at once, each simulator started only once the memory recent
// runs of its config took fits in the memory available (memory.go:
// MemAvailable, or the memory cgroup's limit less its use) beside the
// ones running.
//
// It owns the simulator processes it starts, and nothing else: a run's
// row changes only through the [runs.Host] it was made with (running,
// progress, end), and nothing survives a restart (the Manager runs what
// was running again). It never touches the database, events, Slurm, or
// the Manager.
package local
