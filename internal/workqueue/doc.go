// Package workqueue runs work for keys in the order they were queued, with
// at most a fixed number at once. It is the one queue of Cascade's
// background work: post-processing traces (postproc), and executing runs
// or, with the Slurm executor, submitting their batch jobs (runs); the
// polling of submitted jobs is a loop of its own. It owns only its
// in-memory order; what a key stands for, and whether work for it is
// still wanted, is the caller's, which keeps that truth in the database
// and queues it again after a restart.
package workqueue
