// Package slurmexec is the Slurm executor of runs ([runs.Executor]): each
// job is a Slurm batch job, submitted with sbatch, its log on the
// filesystem the server shares with the compute nodes. One squeue call
// per poll interval follows every unfinished job (sacct those squeue has
// forgotten, where the cluster keeps accounting), a running job's log is
// read every second for progress and results, and scancel cancels.
//
// The queued segments of one sampled or split run are one job array
// (array.go, [Executor.StartArray]): one sbatch call, a task each, each
// task then followed, cancelled and reattached to as a job is, by its
// array's id and its index (a [slurm.Ref]).
//
// By concern: submit.go submits (Start) and records a run's job id;
// poll.go polls (Run) and maps each job's status to its run, its end
// judged from the log and Slurm's verdict; cancel.go cancels (one scancel
// for thousands of jobs) and forgets removed runs' jobs; reattach.go
// follows after a restart the jobs of stored ids, and finds by name the
// jobs whose submission was not recorded; health.go says whether Slurm
// answers, and checks at start the commands, the controller and the
// shared filesystems; options.go reads a config folder's
// cascade-slurm.conf.
//
// It owns the jobs' Slurm side: which job is a run's, what Slurm last
// said of it, the cancels and submissions Slurm did not answer yet, and
// its health. A run's row changes only through the [runs.Host] it was made
// with; Slurm's commands run only through the client in package slurm,
// configured by the one settings value, [slurm.Config]. It never touches
// the database, events, or the Manager. Slurm failing or timing out
// changes no run: the executor turns unhealthy until Slurm answers again.
package slurmexec
