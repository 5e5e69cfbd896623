// Package slurm is Cascade's client of a Slurm cluster: it writes a batch
// job script for a program, submits it with sbatch, follows many jobs with one
// squeue call per poll (and one sacct call for jobs squeue has forgotten,
// where the cluster keeps accounting), and cancels with scancel.
//
// It owns the job scripts it writes and Cascade's Slurm settings, [Config]:
// one value from the serve command's flags to the executor and its
// [Client], with every job's sbatch [Options] (read from a config folder's
// cascade-slurm.conf by [ReadOptions]). Which job belongs to which run,
// and what a run's state becomes, is the caller's (runs/slurmexec); it
// never touches the database, events or runs. It
// talks to Slurm only through its commands, as a user at a login node would,
// so it needs no library or REST daemon and works with any cluster whose
// client commands are on PATH (SLURM_CONF chooses among clusters).
//
// Slurm's commands failing or timing out — the controller restarting, the
// network between — is not a job failing: [Client] methods return an error
// wrapping [ErrUnavailable] for it, and callers keep their jobs' last known
// state and poll again. A job Slurm no longer knows is [Lost].
//
// How an executor uses it (runs/slurmexec; package runs keeps the rows):
//   - Submit a [Job] named for its run ("cascade-<run id>") and store the
//     [JobID] on the run at once; the run stays queued.
//   - Every interval, [Client.Poll] all unfinished runs' ids together and
//     map each [Status] to the run; keep runs as they are on an error.
//   - Several programs with the same options go as one [ArrayJob] (one
//     sbatch --array call, [Client.SubmitArray]); each [Task] is then a
//     [Ref] ("1234_5": the array's id, the task's index), polled with
//     [Client.PollRefs] and cancelled with [Client.CancelRefs] as a job is
//     (an array's own id cancels all its tasks). squeue's one record of an
//     array's pending tasks ("1234_[0,2-3]"), and sacct's, are read as a
//     status for each task.
//   - After a restart, poll the stored ids again (that is the reattach);
//     a run with no stored id may have been submitted just before the
//     crash, so look for its name in [Client.Queue], and then (with
//     accounting) in [Client.AccountedByName], before submitting it.
//
// The JSON read is squeue's and sacct's --json output as of Slurm 22.05
// (OpenAPI v0.0.38, Debian 12); testdata holds outputs recorded from a real
// cluster (testdata/record.sh; the *-array.json ones as array_test.go says),
// and the tests in cluster_test.go and array_cluster_test.go run against
// one started by scripts/slurm.sh.
package slurm
