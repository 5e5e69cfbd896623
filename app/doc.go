// Package app wires Cascade's packages into a running server: database,
// event broker, scanner, post-processor, sample trace, run manager and the
// HTTP API. It is the one place that picks the runs' executor (runs/local,
// or runs/slurmexec given the Slurm settings, slurm.Config, as they came)
// and hands it to the run manager.
//
// It takes a finished Config; flags and environment belong to
// cmd/cascade. It owns the server's lifetime (start, readiness, Close), and
// none of the parts' own logic: what a run or a trace becomes is theirs.
package app
